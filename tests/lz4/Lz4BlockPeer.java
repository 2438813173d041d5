// The lz4 test's Java peer: lz4-java's own LZ4BlockOutputStream and
// LZ4BlockInputStream (Debian's liblz4-java), as N5 Java uses them.
// Runs every job of a job file in one JVM, one job per line:
//   encode <blockSize> <input> <output>   LZ4BlockOutputStream(out, blockSize), write, close
//   decode <input> <output>               LZ4BlockInputStream(in), read to the end
// Prints the LZ4 implementation in use, then "ok".
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import net.jpountz.lz4.LZ4BlockInputStream;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;

public class Lz4BlockPeer {
  public static void main(String[] args) throws Exception {
    System.out.println("lz4-java compressor: " + LZ4Factory.fastestInstance().fastCompressor());
    List<String> jobs = Files.readAllLines(Paths.get(args[0]));
    for (String job : jobs) {
      String[] f = job.trim().split(" ");
      if (f[0].equals("encode")) {
        byte[] data = Files.readAllBytes(Paths.get(f[2]));
        try (OutputStream out = new LZ4BlockOutputStream(new FileOutputStream(f[3]), Integer.parseInt(f[1]))) {
          out.write(data);
        }
      } else if (f[0].equals("decode")) {
        try (InputStream in = new LZ4BlockInputStream(new FileInputStream(f[1]))) {
          Files.write(Paths.get(f[2]), in.readAllBytes());
        }
      } else if (!f[0].isEmpty()) {
        throw new IllegalArgumentException("unknown job: " + job);
      }
    }
    System.out.println("ok");
  }
}
