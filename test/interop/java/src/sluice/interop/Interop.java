// The Java client's side of Sluice's Kafka interop tests (issue 14).
//
//   java -cp LIB/*:CLASSES sluice.interop.Interop produce --bootstrap B --topic T --count N [--prefix P]
//   java -cp LIB/*:CLASSES sluice.interop.Interop consume --bootstrap B --topic T --group G [--count N] [--max-ms MS]
//
// produce uses KafkaProducer with its default settings (idempotence on,
// acks=all): only the bootstrap list and serializers are set. Record i has key
// "key-<i>", value "<prefix>-<i>", headers src=java and i=<i>, and timestamp
// 1700000000000 + i (so a reader can check timestamps byte for byte).
// consume is a KafkaConsumer group member (the default classic protocol, the
// cooperative-sticky assignor) that reads from the earliest offset, commits
// synchronously after each poll, and stops after --count records, when stdin
// closes, or after --max-ms; then it commits, prints the committed offsets and
// leaves the group. Every result is one JSON object per line on stdout with an
// "event" field; diagnostics go to stderr. Exit status 0 on success, 1 on error.
package sluice.interop;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class Interop {
  static final long BASE_TIMESTAMP_MS = 1_700_000_000_000L;

  public static void main(String[] args) throws Exception {
    if (args.length < 1) fail("usage: Interop produce|consume --bootstrap B --topic T ...");
    Map<String, String> o = parse(args);
    try {
      switch (args[0]) {
        case "produce": produce(o); break;
        case "consume": consume(o); break;
        default: fail("unknown command " + args[0]);
      }
    } catch (Exception e) {
      fail(e.toString());
    }
    System.out.flush();
    System.exit(0);
  }

  static Map<String, String> parse(String[] args) {
    Map<String, String> o = new HashMap<>();
    o.put("bootstrap", "127.0.0.1:9092");
    o.put("count", "10");
    o.put("prefix", "java");
    o.put("max-ms", "120000");
    for (int i = 1; i < args.length; i += 2) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) fail("bad argument " + args[i]);
      o.put(args[i].substring(2), args[i + 1]);
    }
    if (!o.containsKey("topic")) fail("--topic is required");
    return o;
  }

  static void produce(Map<String, String> o) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    int count = Integer.parseInt(o.get("count"));
    String topic = o.get("topic");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        RecordHeaders h = new RecordHeaders();
        h.add("src", "java".getBytes(StandardCharsets.UTF_8));
        h.add("i", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
        acks.add(producer.send(new ProducerRecord<>(topic, null, BASE_TIMESTAMP_MS + i, "key-" + i, o.get("prefix") + "-" + i, h)));
      }
      for (int i = 0; i < count; i++) {
        RecordMetadata m = acks.get(i).get(60, TimeUnit.SECONDS);
        emit("{\"event\":\"produced\",\"partition\":" + m.partition() + ",\"offset\":" + m.offset()
            + ",\"timestamp\":" + m.timestamp() + ",\"key\":" + str("key-" + i) + ",\"value\":" + str(o.get("prefix") + "-" + i) + "}");
      }
    }
    emit("{\"event\":\"done\",\"produced\":" + count + "}");
  }

  static void consume(Map<String, String> o) throws Exception {
    if (!o.containsKey("group")) fail("--group is required");
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(ConsumerConfig.GROUP_ID_CONFIG, o.get("group"));
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    int count = Integer.parseInt(o.get("count"));
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(o.get("max-ms")));
    AtomicBoolean stdinClosed = new AtomicBoolean(false);
    Thread watcher = new Thread(() -> {
      try {
        InputStream in = System.in;
        byte[] buf = new byte[256];
        while (in.read(buf) >= 0) { /* until EOF */ }
      } catch (Exception ignored) { /* treated as closed */ }
      stdinClosed.set(true);
    });
    watcher.setDaemon(true);
    watcher.start();
    int consumed = 0;
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      consumer.subscribe(List.of(o.get("topic")), new ConsumerRebalanceListener() {
        @Override public void onPartitionsRevoked(Collection<TopicPartition> parts) {
          emit("{\"event\":\"revoked\",\"partitions\":" + partitions(parts) + "}");
        }
        @Override public void onPartitionsAssigned(Collection<TopicPartition> parts) {
          emit("{\"event\":\"assigned\",\"partitions\":" + partitions(parts) + "}");
        }
      });
      while (consumed < count && !stdinClosed.get() && System.nanoTime() < deadline) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        for (ConsumerRecord<String, String> r : records) {
          StringBuilder hs = new StringBuilder("[");
          for (Header h : r.headers()) {
            if (hs.length() > 1) hs.append(',');
            hs.append("{\"key\":").append(str(h.key())).append(",\"value\":")
                .append(h.value() == null ? "null" : str(new String(h.value(), StandardCharsets.UTF_8))).append('}');
          }
          hs.append(']');
          emit("{\"event\":\"record\",\"partition\":" + r.partition() + ",\"offset\":" + r.offset() + ",\"timestamp\":" + r.timestamp()
              + ",\"key\":" + str(r.key()) + ",\"value\":" + str(r.value()) + ",\"headers\":" + hs + "}");
          consumed++;
        }
        if (!records.isEmpty()) consumer.commitSync(Duration.ofSeconds(15));
      }
      consumer.commitSync(Duration.ofSeconds(15));
      Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(consumer.assignment(), Duration.ofSeconds(15));
      StringBuilder sb = new StringBuilder("{");
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : committed.entrySet()) {
        if (e.getValue() == null) continue;
        if (sb.length() > 1) sb.append(',');
        sb.append('"').append(e.getKey().partition()).append("\":").append(e.getValue().offset());
      }
      emit("{\"event\":\"committed\",\"offsets\":" + sb.append('}') + "}");
    }
    emit("{\"event\":\"done\",\"consumed\":" + consumed + "}");
  }

  static String partitions(Collection<TopicPartition> parts) {
    StringBuilder sb = new StringBuilder("[");
    for (TopicPartition tp : parts) {
      if (sb.length() > 1) sb.append(',');
      sb.append(tp.partition());
    }
    return sb.append(']').toString();
  }

  static String str(String s) {
    if (s == null) return "null";
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') sb.append('\\').append(c);
      else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
      else sb.append(c);
    }
    return sb.append('"').toString();
  }

  static synchronized void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static void fail(String message) {
    emit("{\"event\":\"error\",\"message\":" + str(message) + "}");
    System.err.println("Interop: " + message);
    System.exit(1);
  }
}
