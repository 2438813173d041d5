// The streams N5 Java 4.x and n5-zstandard wrap their chunks in, as a peer
// for the gzip, bzip2, xz and zstd suites: commons-compress 1.22, xz-java 1.9,
// zstd-jni 1.5.2 and java.util.zip (Debian: libcommons-compress-java,
// libxz-java, libzstd-jni-java).
//
//   java -cp commons-compress.jar:xz.jar:zstd-jni.jar N5JavaCodecsPeer.java DIR
//
// DIR holds names.txt (one sample name a line), <name>.data and our encodings
// <name>.ours.<codec> for some codecs of gzip, zlib, bzip2, xz, zstd. For each
// one present it writes
//   <name>.<codec>.by_java   our encoding decoded by Java
//   <name>.java.<codec>      the data encoded by Java (gzip/zlib level 6,
//                            bzip2 blockSize 9, xz preset 6, zstd level 3)
// using the classes N5 Java's compressions use.
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
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorOutputStream;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdInputStream;

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
      if (Files.exists(dir.resolve(name + ".ours.xz"))) {
        // XzCompression: XZCompressorInputStream(in) / XZCompressorOutputStream(out, preset)
        byte[] ours = Files.readAllBytes(dir.resolve(name + ".ours.xz"));
        Files.write(dir.resolve(name + ".xz.by_java"), decode(ours, XZCompressorInputStream::new));
        Files.write(dir.resolve(name + ".java.xz"), encode(data, s -> new XZCompressorOutputStream(s, 6)));
      }
      if (Files.exists(dir.resolve(name + ".ours.zstd"))) {
        // n5-zstandard: ZstdInputStream(in) to read, ZstdCompressCtx.compress to write
        byte[] ours = Files.readAllBytes(dir.resolve(name + ".ours.zstd"));
        Files.write(dir.resolve(name + ".zstd.by_java"), decode(ours, ZstdInputStream::new));
        try (ZstdCompressCtx ctx = new ZstdCompressCtx()) {
          ctx.setLevel(3);
          Files.write(dir.resolve(name + ".java.zstd"), ctx.compress(data));
        }
      }
    }
  }
}
