// The Java client's side of Sluice's Kafka interop tests (issue 14).
//
//   java -cp LIB/*:CLASSES sluice.interop.Interop produce --bootstrap B --topic T --count N [--prefix P]
//   java -cp LIB/*:CLASSES sluice.interop.Interop consume --bootstrap B --topic T --group G [--count N] [--max-ms MS]
//        [--isolation read_committed|read_uncommitted]
//   java -cp LIB/*:CLASSES sluice.interop.Interop txn-produce --bootstrap B --topic T --txn-id X --count TXNS [--per K] [--abort-every A]
//        [--partitions P]
//   java -cp LIB/*:CLASSES sluice.interop.Interop txn-fence --bootstrap B --topic T --txn-id X
//   java -cp LIB/*:CLASSES sluice.interop.Interop txn-copy --bootstrap B --topic IN --to OUT --group G --txn-id X --count N [--max-ms MS]
//
// produce uses KafkaProducer with its default settings (idempotence on,
// acks=all): only the bootstrap list and serializers are set. Record i has key
// "key-<i>", value "<prefix>-<i>", headers src=java and i=<i>, and timestamp
// 1700000000000 + i (so a reader can check timestamps byte for byte).
// consume is a KafkaConsumer group member (the default classic protocol, the
// cooperative-sticky assignor) that reads from the earliest offset, commits
// synchronously after each poll, and stops after --count records, when stdin
// closes, or after --max-ms; then it commits, prints the committed offsets and
// leaves the group (--isolation sets isolation.level; default the client's,
// read_uncommitted).
// Transactions (issue 18), each with KafkaProducer's transactional.id set:
// txn-produce runs --count transactions of --per records (value
// "<prefix>-<t>-<j>"); every --abort-every-th one (t % A == A - 1) is aborted,
// the others committed; one "txn" event per transaction. txn-fence starts a
// transaction as producer 1, writes one record ("zombie-0"), then producer 2
// initialises the same transactional.id, which fences producer 1; producer 1's
// next write and commit must fail ("fenced" event with the exception class),
// and producer 2 commits "fresh-0". txn-copy is exactly-once read-process-
// write: a read_committed group member copies each record of IN to OUT
// (value "copy-<value>") in one transaction per poll, with its offsets sent
// to the transaction (sendOffsetsToTransaction with the consumer's group
// metadata, KIP-447), until --count records are copied or stdin closes.
// Every result is one JSON object per line on stdout with an
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
    if (args.length < 1) fail("usage: Interop produce|consume|txn-produce|txn-fence|txn-copy --bootstrap B --topic T ...");
    Map<String, String> o = parse(args);
    try {
      switch (args[0]) {
        case "produce": produce(o); break;
        case "consume": consume(o); break;
        case "txn-produce": txnProduce(o); break;
        case "txn-fence": txnFence(o); break;
        case "txn-copy": txnCopy(o); break;
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
    if (o.containsKey("isolation")) p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, o.get("isolation"));
    int count = Integer.parseInt(o.get("count"));
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(o.get("max-ms")));
    AtomicBoolean stdinClosed = stdinWatcher();
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

  /** Set once stdin reaches EOF (the test's way of saying stop). */
  static AtomicBoolean stdinWatcher() {
    AtomicBoolean closed = new AtomicBoolean(false);
    Thread watcher = new Thread(() -> {
      try {
        InputStream in = System.in;
        byte[] buf = new byte[256];
        while (in.read(buf) >= 0) { /* until EOF */ }
      } catch (Exception ignored) { /* treated as closed */ }
      closed.set(true);
    });
    watcher.setDaemon(true);
    watcher.start();
    return closed;
  }

  static KafkaProducer<String, String> transactional(Map<String, String> o) {
    if (!o.containsKey("txn-id")) fail("--txn-id is required");
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, o.get("txn-id"));
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    return new KafkaProducer<>(p);
  }

  static void txnProduce(Map<String, String> o) throws Exception {
    int txns = Integer.parseInt(o.get("count"));
    int per = Integer.parseInt(o.getOrDefault("per", "3"));
    int abortEvery = Integer.parseInt(o.getOrDefault("abort-every", "3"));
    // --partitions P: record j of each transaction goes to partition j % P (so every transaction spans the partitions)
    int parts = Integer.parseInt(o.getOrDefault("partitions", "0"));
    String topic = o.get("topic");
    try (KafkaProducer<String, String> producer = transactional(o)) {
      producer.initTransactions();
      for (int t = 0; t < txns; t++) {
        boolean abort = abortEvery > 0 && t % abortEvery == abortEvery - 1;
        producer.beginTransaction();
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        StringBuilder values = new StringBuilder("[");
        for (int j = 0; j < per; j++) {
          String value = o.get("prefix") + "-" + t + "-" + j;
          Integer partition = parts > 0 ? j % parts : null;
          acks.add(producer.send(new ProducerRecord<>(topic, partition, "key-" + t + "-" + j, value)));
          if (j > 0) values.append(',');
          values.append(str(value));
        }
        producer.flush();
        StringBuilder offsets = new StringBuilder("[");
        for (int j = 0; j < per; j++) {
          RecordMetadata m = acks.get(j).get(60, TimeUnit.SECONDS);
          if (j > 0) offsets.append(',');
          offsets.append("{\"partition\":").append(m.partition()).append(",\"offset\":").append(m.offset()).append('}');
        }
        if (abort) producer.abortTransaction();
        else producer.commitTransaction();
        emit("{\"event\":\"txn\",\"txn\":" + t + ",\"committed\":" + !abort + ",\"values\":" + values.append(']')
            + ",\"offsets\":" + offsets.append(']') + "}");
      }
    }
    emit("{\"event\":\"done\",\"transactions\":" + txns + "}");
  }

  static void txnFence(Map<String, String> o) throws Exception {
    String topic = o.get("topic");
    KafkaProducer<String, String> zombie = transactional(o);
    try (KafkaProducer<String, String> fresh = transactional(o)) {
      zombie.initTransactions();
      zombie.beginTransaction();
      zombie.send(new ProducerRecord<>(topic, "zombie", "zombie-0")).get(60, TimeUnit.SECONDS);
      emit("{\"event\":\"zombie-wrote\"}");
      fresh.initTransactions();
      emit("{\"event\":\"fresh-initialised\"}");
      try {
        zombie.send(new ProducerRecord<>(topic, "zombie", "zombie-1")).get(60, TimeUnit.SECONDS);
        zombie.commitTransaction();
        emit("{\"event\":\"zombie-committed\"}");
      } catch (Exception e) {
        Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
        emit("{\"event\":\"fenced\",\"error\":" + str(cause.getClass().getName()) + "}");
      } finally {
        zombie.close(Duration.ofSeconds(5));
      }
      fresh.beginTransaction();
      fresh.send(new ProducerRecord<>(topic, "fresh", "fresh-0")).get(60, TimeUnit.SECONDS);
      fresh.commitTransaction();
      emit("{\"event\":\"fresh-committed\"}");
    }
    emit("{\"event\":\"done\"}");
  }

  static void txnCopy(Map<String, String> o) throws Exception {
    if (!o.containsKey("group") || !o.containsKey("to")) fail("--group and --to are required");
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
    c.put(ConsumerConfig.GROUP_ID_CONFIG, o.get("group"));
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    int count = Integer.parseInt(o.get("count"));
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(o.get("max-ms")));
    AtomicBoolean stdinClosed = stdinWatcher();
    int copied = 0;
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c); KafkaProducer<String, String> producer = transactional(o)) {
      producer.initTransactions();
      consumer.subscribe(List.of(o.get("topic")));
      while (copied < count && !stdinClosed.get() && System.nanoTime() < deadline) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) continue;
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (ConsumerRecord<String, String> r : records) {
          producer.send(new ProducerRecord<>(o.get("to"), r.key(), "copy-" + r.value()));
          next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
        producer.commitTransaction();
        copied += records.count();
        emit("{\"event\":\"copied\",\"records\":" + records.count() + "}");
      }
    }
    emit("{\"event\":\"done\",\"copied\":" + copied + "}");
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
