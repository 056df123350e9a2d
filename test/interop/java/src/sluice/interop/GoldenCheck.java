// Checks Sluice's golden Kafka frames (test/protocol/kafka/fixtures/<api>/v<N>.<kind>.hex)
// with Kafka's own generated message classes: each fixture must decode with
// org.apache.kafka.common.message.<Api>{Request,Response}Data at its version,
// consume every byte, and re-serialize to the same bytes. One JSON line per
// fixture on stdout: {"file":..., "ok":true} or {"file":..., "ok":false, "error":...};
// a version Kafka's classes no longer read (KIP-896 removed some) is reported
// as {"ok":true, "skipped": ...}.
//
// Usage: java -cp <kafka-clients jars>:<classes> sluice.interop.GoldenCheck <fixtures dir>
package sluice.interop;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;

public final class GoldenCheck {
  private static final Pattern NAME = Pattern.compile("v(\\d+)\\.(request|response)\\.hex");

  private GoldenCheck() {}

  static byte[] parseHex(String text) {
    StringBuilder hex = new StringBuilder();
    for (String line : text.split("\n")) {
      int hash = line.indexOf('#');
      hex.append((hash >= 0 ? line.substring(0, hash) : line).replaceAll("\\s+", ""));
    }
    byte[] out = new byte[hex.length() / 2];
    for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    return out;
  }

  static String pascal(String kebab) {
    StringBuilder sb = new StringBuilder();
    for (String part : kebab.split("-")) sb.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
    return sb.toString();
  }

  static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
  }

  static String check(Path file) throws Exception {
    Matcher m = NAME.matcher(file.getFileName().toString());
    if (!m.matches()) return null;
    short version = Short.parseShort(m.group(1));
    String kind = m.group(2).equals("request") ? "RequestData" : "ResponseData";
    String api = file.getParent().getFileName().toString();
    String rel = api + "/" + file.getFileName();
    try {
      Class<?> cls = Class.forName("org.apache.kafka.common.message." + pascal(api) + kind);
      Message msg = (Message) cls.getDeclaredConstructor().newInstance();
      if (version < msg.lowestSupportedVersion() || version > msg.highestSupportedVersion()) {
        // Kafka's own classes dropped this version (KIP-896) or do not know it yet: nothing to compare with.
        return "{\"file\":" + quote(rel) + ",\"ok\":true,\"skipped\":" + quote("Kafka's classes read v" + msg.lowestSupportedVersion() + "-v" + msg.highestSupportedVersion()) + "}";
      }
      byte[] bytes = parseHex(Files.readString(file, StandardCharsets.UTF_8));
      ByteBufferAccessor in = new ByteBufferAccessor(ByteBuffer.wrap(bytes));
      msg.read(in, version);
      if (in.remaining() != 0) return "{\"file\":" + quote(rel) + ",\"ok\":false,\"error\":" + quote(in.remaining() + " bytes left after decoding") + "}";
      ByteBuffer out = MessageUtil.toByteBufferAccessor(msg, version).buffer();
      byte[] again = new byte[out.remaining()];
      out.get(again);
      if (!java.util.Arrays.equals(bytes, again)) {
        return "{\"file\":" + quote(rel) + ",\"ok\":false,\"error\":" + quote("re-serialized bytes differ: " + msg) + "}";
      }
      return "{\"file\":" + quote(rel) + ",\"ok\":true}";
    } catch (Exception | Error e) {
      return "{\"file\":" + quote(rel) + ",\"ok\":false,\"error\":" + quote(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}";
    }
  }

  public static void main(String[] args) throws Exception {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.walk(Path.of(args[0]))) {
      s.filter(Files::isRegularFile).sorted().forEach(files::add);
    }
    for (Path f : files) {
      String line = check(f);
      if (line != null) System.out.println(line);
    }
  }
}
