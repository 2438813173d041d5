// The streams N5 Java 4.x wraps its gzip and bzip2 chunks in, as a peer for
// the gzip and bzip2 suites: commons-compress 1.22 (Debian's
// libcommons-compress-java) and java.util.zip.
//
//   java -cp /usr/share/java/commons-compress.jar N5JavaCodecsPeer.java DIR
//
// DIR holds names.txt (one sample name a line), <name>.data and our encodings
// <name>.ours.{gzip,zlib,bzip2}. For each sample present it writes
//   <name>.{gzip,zlib,bzip2}.by_java   our encodings decoded by Java
//   <name>.java.{gzip,zlib,bzip2}      the data encoded by Java (level 6, blockSize 9)
// using the classes N5 Java's GzipCompression and Bzip2Compression use.
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.InflaterInputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorInputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;
import org.apache.commons.compress.compressors.gzip.GzipParameters;

public class N5JavaCodecsPeer {
  interface Wrap<T> {
    T wrap(T stream) throws IOException;
  }

  static byte[] decode(byte[] in, Wrap<InputStream> codec) throws IOException {
    try (InputStream s = codec.wrap(new ByteArrayInputStream(in))) {
      return s.readAllBytes();
    }
  }

  static byte[] encode(byte[] in, Wrap<OutputStream> codec) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (OutputStream s = codec.wrap(bytes)) {
      s.write(in);
    }
    return bytes.toByteArray();
  }

  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0]);
    for (String name : Files.readAllLines(dir.resolve("names.txt"))) {
      if (name.isEmpty()) continue;
      byte[] data = Files.readAllBytes(dir.resolve(name + ".data"));
      if (Files.exists(dir.resolve(name + ".ours.gzip"))) {
        // GzipCompression: GzipCompressorInputStream(in, true) / GzipCompressorOutputStream(out, parameters)
        byte[] ours = Files.readAllBytes(dir.resolve(name + ".ours.gzip"));
        Files.write(dir.resolve(name + ".gzip.by_java"), decode(ours, s -> new GzipCompressorInputStream(s, true)));
        GzipParameters parameters = new GzipParameters();
        parameters.setCompressionLevel(6);
        Files.write(dir.resolve(name + ".java.gzip"), encode(data, s -> new GzipCompressorOutputStream(s, parameters)));
      }
      if (Files.exists(dir.resolve(name + ".ours.zlib"))) {
        // GzipCompression with useZlib: InflaterInputStream / DeflaterOutputStream(out, new Deflater(level))
        byte[] ours = Files.readAllBytes(dir.resolve(name + ".ours.zlib"));
        Files.write(dir.resolve(name + ".zlib.by_java"), decode(ours, InflaterInputStream::new));
        Files.write(dir.resolve(name + ".java.zlib"), encode(data, s -> new DeflaterOutputStream(s, new Deflater(6))));
      }
      if (Files.exists(dir.resolve(name + ".ours.bzip2"))) {
        // Bzip2Compression: BZip2CompressorInputStream(in) / BZip2CompressorOutputStream(out, blockSize)
        byte[] ours = Files.readAllBytes(dir.resolve(name + ".ours.bzip2"));
        Files.write(dir.resolve(name + ".bzip2.by_java"), decode(ours, BZip2CompressorInputStream::new));
        Files.write(dir.resolve(name + ".java.bzip2"), encode(data, s -> new BZip2CompressorOutputStream(s, 9)));
      }
    }
  }
}
