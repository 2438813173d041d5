// Reads a datg dataset the way the reference Java reader
// (systemsgenetics DoubleMatrixDatasetRowCompressedReader) does: Java's own
// DataInput for the footer and modified UTF-8 strings, Apache Commons
// Compress' FramedLZ4CompressorInputStream for LZ4 frames (flag 1), lz4-java's
// LZ4BlockInputStream for LZ4Block streams (flag 0), GZIPInputStream for the
// name files. Run with Debian's jars:
//   java -cp /usr/share/java/commons-compress.jar:/usr/share/java/lz4-java.jar \
//        DatgJavaPeer.java <file.datg> <out.bin> <out.txt>
// out.bin: the matrix as little-endian float64, C order.
// out.txt: one line per string, hex of its UTF-8 bytes: dataset name, row
// entity, column entity, then "rows <n>", the row names, "cols <n>", the column names.
import java.io.*;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import net.jpountz.lz4.LZ4BlockInputStream;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorInputStream;

public class DatgJavaPeer {
  static InputStream container(RandomAccessFile f, long offset, int flag) throws IOException {
    f.seek(offset);
    InputStream raw = new BufferedInputStream(new FileInputStream(f.getFD()));
    return flag == 1 ? new FramedLZ4CompressorInputStream(raw) : new LZ4BlockInputStream(raw);
  }

  static List<String> names(String path) throws IOException {
    List<String> out = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(
             new GZIPInputStream(new FileInputStream(path)), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null;) out.add(line.split("\t", -1)[0]);
    }
    return out;
  }

  static String hex(String s) {
    StringBuilder b = new StringBuilder();
    for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x));
    return b.toString();
  }

  public static void main(String[] args) throws IOException {
    String path = args[0];
    String base = path.endsWith(".datg") ? path.substring(0, path.length() - 5) : path;
    try (RandomAccessFile f = new RandomAccessFile(path, "r")) {
      f.seek(f.length() - 44);
      long created = f.readLong();
      int rows = f.readInt(), cols = f.readInt();
      long indexOffset = f.readLong(), metadataOffset = f.readLong();
      int rowsPerBlock = f.readInt();
      byte[] tail = new byte[8];
      f.readFully(tail);
      if (tail[4] != 'U' || tail[5] != 'M' || tail[6] != 'C' || tail[7] != 'G') throw new IOException("magic");
      if (tail[0] != 0 || tail[1] != 0 || tail[2] != 0 || tail[3] > 1) throw new IOException("flags");
      int flag = tail[3];
      f.seek(metadataOffset);
      String[] meta = {f.readUTF(), f.readUTF(), f.readUTF()};

      int blocks = rows == 0 ? 0 : (rows + rowsPerBlock - 1) / rowsPerBlock;
      long[] index = new long[blocks];
      DataInputStream in = new DataInputStream(container(f, indexOffset, flag));
      for (int b = 0; b < blocks; ++b) index[b] = in.readLong();

      try (OutputStream out = new BufferedOutputStream(new FileOutputStream(args[1]))) {
        ByteBuffer le = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        for (int b = 0; b < blocks; ++b) {
          int count = Math.min(rowsPerBlock, rows - b * rowsPerBlock);
          byte[] block = new byte[count * cols * 8];
          new DataInputStream(container(f, index[b], flag)).readFully(block);
          ByteBuffer be = ByteBuffer.wrap(block);  // big-endian
          for (int i = 0; i < count * cols; ++i) {
            le.clear();
            le.putLong(Double.doubleToRawLongBits(be.getDouble()));
            out.write(le.array());
          }
        }
      }
      try (PrintWriter w = new PrintWriter(args[2], "UTF-8")) {
        for (String m : meta) w.println(hex(m));
        List<String> rowNames = names(base + ".rows.txt.gz"), colNames = names(base + ".cols.txt.gz");
        w.println("rows " + rowNames.size());
        for (String n : rowNames) w.println(hex(n));
        w.println("cols " + colNames.size());
        for (String n : colNames) w.println(hex(n));
        w.println("created " + created);
      }
    }
  }
}
