// The benchmark suite's driver for anything that speaks Kafka's protocol
// (Apache Kafka itself, and Sluice's Kafka listener): the suite's workloads
// (bench/suite/types.ts) run with Kafka's own Java client, the way
// kafka-producer-perf-test drives it, so a Kafka figure measures the broker
// and not a slow client. One JVM per workload; the clock starts after the
// JVM, the client and its metadata are up, and stops at the last
// acknowledgement (produce), the last record read (consume), or the end of
// the paced run (e2e).
//
//   java -cp <kafka jars>:<classes> sluice.bench.KafkaBench MODE key=value ...
//   ready     bootstrap brokers timeoutMs        until Metadata lists `brokers`
//   topic     bootstrap topic partitions rf minIsr   create, wait for full ISRs
//   produce   bootstrap topic producers records seconds valueBytes [p.<config>=v]
//   consume   bootstrap topic ends=e0,e1,.. consumers seconds [groupId]
//   e2e       bootstrap topic rate seconds warmupSeconds valueBytes latencyFile [p.<config>=v]
//   topic     ... [assignment=a,b,c]             (1 partition, those replicas, a preferred)
//   leader    bootstrap [topic partition]        the partition's leader, ISR size, active controller
//   isr       bootstrap topic partition isr timeoutMs   until a leader and `isr` ISR members
//   paced     bootstrap topic rate seconds gapMs [p.<config>=v]   (failover: acks over time)
//   failover  bootstrap topic rate seconds valueBytes [p.<config>=v]   (failover: every ack, then a read-back)
//
// Output: JSON lines on stdout, {"event":"progress","done":N} every 250 ms
// and one {"event":"result",...} at the end; any failure prints
// {"event":"error","message":...} and exits 1. `p.<name>=<value>` sets a
// producer config (p.acks=all, p.linger.ms=10, p.batch.size=262144).
//
// Invariants: a produced record counts only when its callback reports no
// exception (any exception fails the run); produce with N producers writes
// partition i from producer i, sharing the record budget; consume counts each
// partition's records below its end offset once; e2e's values carry
// System.nanoTime() at send in their first 8 bytes and producer and consumer
// share this JVM's clock; only records sent after the warm-up are written to
// latencyFile (int32 microseconds, little endian). `failover` (issue 19's
// leader kill) sends records numbered 0, 1, 2, .. (the number in the value's
// first 8 bytes) to partition 0 at `rate` until stdin closes or `seconds`
// pass, printing {"event":"ack","atMs":..,"seq":..,"offset":..} for every
// acknowledgement and {"event":"send-error",..} for every failed send; then
// it flushes, reads the partition back from offset 0 to its end and prints a
// result with `lost` (acknowledged numbers not in the log), `duplicates`
// (numbers in the log more than once) and `epochs` ([first offset, leader
// epoch] at each change of the records' leader epoch, which tells which
// leader appended each offset). `paced` sends to partition
// 0 at `rate` until stdin closes or `seconds` pass, printing
// {"event":"ack","atMs":..} for the first acknowledgement after every gap of
// at least `gapMs` without one ({"gapFromMs":..} says when the gap began),
// {"event":"send-error",..} for every failed send (the run goes on: a
// failover is expected), and a result with acked/failed counts at the end.
package sluice.bench;

import java.io.DataOutputStream;
import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaBench {
  private static final long PROGRESS_EVERY_NS = 250_000_000L;
  private static final int VALUE_POOL = 1024;
  private static final long DRAIN_MS_MAX = 30_000;

  private KafkaBench() {}

  public static void main(String[] argv) {
    try {
      if (argv.length == 0) throw new IllegalArgumentException("usage: KafkaBench ready|topic|produce|consume|e2e|leader|isr|paced|failover key=value ...");
      Map<String, String> a = new HashMap<>();
      for (int i = 1; i < argv.length; i++) {
        int eq = argv[i].indexOf('=');
        if (eq <= 0) throw new IllegalArgumentException("argument " + argv[i] + " is not key=value");
        a.put(argv[i].substring(0, eq), argv[i].substring(eq + 1));
      }
      switch (argv[0]) {
        case "ready": ready(a); break;
        case "topic": topic(a); break;
        case "produce": produce(a); break;
        case "consume": consume(a); break;
        case "e2e": e2e(a); break;
        case "leader": leader(a); break;
        case "paced": paced(a); break;
        case "isr": isr(a); break;
        case "failover": failover(a); break;
        default: throw new IllegalArgumentException("unknown mode " + argv[0]);
      }
      System.out.flush();
      System.exit(0);
    } catch (Throwable t) {
      Throwable root = t;
      while (root.getCause() != null && root.getCause() != root) root = root.getCause();
      String msg = t == root ? String.valueOf(t) : t + " (cause: " + root + ")";
      System.out.println("{\"event\":\"error\",\"message\":" + json(msg) + "}");
      System.out.flush();
      System.exit(1);
    }
  }

  // ------------------------------------------------------------------ plumbing

  private static String need(Map<String, String> a, String k) {
    String v = a.get(k);
    if (v == null) throw new IllegalArgumentException("missing argument " + k + "=");
    return v;
  }

  private static long num(Map<String, String> a, String k) {
    return Long.parseLong(need(a, k));
  }

  static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  private static double processCpuSeconds() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean) {
      return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() / 1e9;
    }
    return 0;
  }

  private static Properties adminProps(Map<String, String> a) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, need(a, "bootstrap"));
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    return p;
  }

  private static Properties producerProps(Map<String, String> a) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, need(a, "bootstrap"));
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    for (Map.Entry<String, String> e : a.entrySet()) if (e.getKey().startsWith("p.")) p.put(e.getKey().substring(2), e.getValue());
    return p;
  }

  private static Properties consumerProps(Map<String, String> a, String groupId) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, need(a, "bootstrap"));
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    if (groupId != null) p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    for (Map.Entry<String, String> e : a.entrySet()) if (e.getKey().startsWith("c.")) p.put(e.getKey().substring(2), e.getValue());
    return p;
  }

  private static byte[][] randomValues(int bytes) {
    Random r = new Random();
    byte[][] pool = new byte[VALUE_POOL][];
    for (int i = 0; i < VALUE_POOL; i++) {
      pool[i] = new byte[bytes];
      r.nextBytes(pool[i]);
    }
    return pool;
  }

  /** Cumulative records at times since the start, sampled by the progress loop, and the progress lines. */
  static final class Meter {
    final long startNs = System.nanoTime();
    final AtomicLong records = new AtomicLong();
    final AtomicLong bytes = new AtomicLong();
    private final StringBuilder timeline = new StringBuilder("[[0,0]");
    private long nextNs = startNs + PROGRESS_EVERY_NS;
    final double cpu0 = processCpuSeconds();

    /** Called from the driving loop: prints progress and samples the timeline when 250 ms have passed. */
    synchronized void tick() {
      long now = System.nanoTime();
      if (now < nextNs) return;
      nextNs = now + PROGRESS_EVERY_NS;
      long n = records.get();
      timeline.append(String.format(",[%.2f,%d]", (now - startNs) / 1e9, n));
      System.out.println("{\"event\":\"progress\",\"done\":" + n + "}");
    }

    synchronized String result(String extra) {
      double seconds = Math.max(1e-6, (System.nanoTime() - startNs) / 1e9);
      long n = records.get();
      String tl = timeline.toString() + String.format(",[%.2f,%d]]", seconds, n);
      return "{\"event\":\"result\",\"records\":" + n + ",\"bytes\":" + bytes.get() + ",\"seconds\":" + seconds
          + ",\"cpuSeconds\":" + (processCpuSeconds() - cpu0) + ",\"timeline\":" + tl + extra + "}";
    }
  }

  // ------------------------------------------------------------------ ready / topic

  private static void ready(Map<String, String> a) throws Exception {
    int brokers = (int) num(a, "brokers");
    long deadline = System.currentTimeMillis() + num(a, "timeoutMs");
    String last = "no answer";
    try (Admin admin = Admin.create(adminProps(a))) {
      while (System.currentTimeMillis() < deadline) {
        try {
          int n = admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size();
          if (n >= brokers) {
            System.out.println("{\"event\":\"result\",\"brokers\":" + n + "}");
            return;
          }
          last = n + " brokers";
        } catch (Exception e) {
          last = String.valueOf(e);
        }
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException("fewer than " + brokers + " brokers in the cluster: " + last);
  }

  private static void topic(Map<String, String> a) throws Exception {
    String topic = need(a, "topic");
    int partitions = (int) num(a, "partitions");
    short rf = (short) num(a, "rf");
    long deadline = System.currentTimeMillis() + 60_000;
    try (Admin admin = Admin.create(adminProps(a))) {
      NewTopic t = new NewTopic(topic, partitions, rf);
      if (a.containsKey("assignment")) {
        // One partition on these replicas, the first the preferred leader (for a failover round).
        if (partitions != 1) throw new IllegalArgumentException("assignment= takes one partition");
        List<Integer> replicas = new ArrayList<>();
        for (String id : need(a, "assignment").split(",")) replicas.add(Integer.parseInt(id.trim()));
        if (replicas.size() != rf) throw new IllegalArgumentException("assignment= names " + replicas.size() + " replicas, rf is " + rf);
        t = new NewTopic(topic, Map.of(0, replicas));
      }
      t = t.configs(Map.of("min.insync.replicas", need(a, "minIsr")));
      admin.createTopics(List.of(t)).all().get(30, TimeUnit.SECONDS);
      String last = "";
      while (System.currentTimeMillis() < deadline) {
        try {
          TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
          boolean full = d.partitions().size() == partitions;
          for (TopicPartitionInfo p : d.partitions()) full &= p.leader() != null && p.isr().size() == rf;
          if (full) {
            System.out.println("{\"event\":\"result\",\"topic\":" + json(topic) + "}");
            return;
          }
          last = d.toString();
        } catch (Exception e) {
          last = String.valueOf(e);
        }
        Thread.sleep(100);
      }
      throw new IllegalStateException(topic + " has no leader with a full ISR for every partition: " + last);
    }
  }

  // ------------------------------------------------------------------ produce

  private static void produce(Map<String, String> a) throws Exception {
    String topic = need(a, "topic");
    int producers = (int) num(a, "producers");
    long records = num(a, "records");
    int valueBytes = (int) num(a, "valueBytes");
    Properties props = producerProps(a);
    List<KafkaProducer<byte[], byte[]>> ps = new ArrayList<>();
    for (int i = 0; i < producers; i++) {
      KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props);
      p.partitionsFor(topic); // metadata before the clock starts
      ps.add(p);
    }
    byte[][] values = randomValues(valueBytes);
    AtomicLong claimed = new AtomicLong();
    AtomicLongArray acked = new AtomicLongArray(producers);
    AtomicReference<Exception> failure = new AtomicReference<>();
    Meter meter = new Meter();
    long deadlineNs = meter.startNs + num(a, "seconds") * 1_000_000_000L;
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < producers; i++) {
      final int partition = i;
      final KafkaProducer<byte[], byte[]> p = ps.get(i);
      Thread t = new Thread(() -> {
        int cursor = 0;
        while (failure.get() == null && System.nanoTime() < deadlineNs && claimed.getAndIncrement() < records) {
          byte[] v = values[cursor++ & (VALUE_POOL - 1)];
          p.send(new ProducerRecord<>(topic, partition, null, v), (md, err) -> {
            if (err != null) {
              failure.compareAndSet(null, err);
              return;
            }
            acked.incrementAndGet(partition);
            meter.records.incrementAndGet();
            meter.bytes.addAndGet(valueBytes);
          });
          if ((cursor & 1023) == 0) meter.tick();
        }
        p.flush();
      }, "producer-" + i);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      while (t.isAlive()) {
        t.join(50);
        meter.tick();
      }
    }
    if (failure.get() != null) throw failure.get();
    StringBuilder ends = new StringBuilder(",\"acked\":[");
    for (int i = 0; i < producers; i++) ends.append(i == 0 ? "" : ",").append(acked.get(i));
    String result = meter.result(ends.append(']').toString());
    for (KafkaProducer<byte[], byte[]> p : ps) p.close(Duration.ofSeconds(10));
    System.out.println(result);
  }

  // ------------------------------------------------------------------ consume

  private static void consume(Map<String, String> a) throws Exception {
    String topic = need(a, "topic");
    String[] endsText = need(a, "ends").split(",");
    long[] ends = new long[endsText.length];
    long total = 0;
    for (int i = 0; i < ends.length; i++) total += (ends[i] = Long.parseLong(endsText[i]));
    int consumers = (int) num(a, "consumers");
    long seconds = num(a, "seconds");
    AtomicLongArray reached = new AtomicLongArray(ends.length);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    final long wanted = total;
    Meter[] meter = new Meter[1];
    if (consumers == 1) {
      // One consumer, partitions assigned (no group): the counterpart of the other systems' single reader.
      try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(consumerProps(a, null))) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < ends.length; i++) tps.add(new TopicPartition(topic, i));
        c.assign(tps);
        c.seekToBeginning(tps);
        for (TopicPartition tp : tps) c.position(tp); // the offset lookups before the clock starts
        meter[0] = new Meter();
        long deadlineNs = meter[0].startNs + seconds * 1_000_000_000L;
        while (meter[0].records.get() < wanted && System.nanoTime() < deadlineNs) {
          count(c.poll(Duration.ofMillis(100)), ends, reached, meter[0]);
          meter[0].tick();
        }
      }
    } else {
      // A group of `consumers` members (classic protocol, range assignor: Kafka's defaults); the clock starts at the first record.
      String group = a.getOrDefault("groupId", "bench-" + System.nanoTime());
      AtomicReference<Meter> started = new AtomicReference<>();
      CountDownLatch done = new CountDownLatch(consumers);
      long capNs = System.nanoTime() + (seconds + 60) * 1_000_000_000L;
      for (int m = 0; m < consumers; m++) {
        Thread t = new Thread(() -> {
          try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(consumerProps(a, group))) {
            c.subscribe(List.of(topic));
            while (failure.get() == null && System.nanoTime() < capNs) {
              ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(100));
              if (!rs.isEmpty()) started.compareAndSet(null, new Meter());
              Meter mt = started.get();
              if (mt == null) continue;
              count(rs, ends, reached, mt);
              mt.tick();
              boolean complete = true;
              for (int i = 0; i < ends.length; i++) complete &= reached.get(i) >= ends[i];
              if (complete || System.nanoTime() >= mt.startNs + seconds * 1_000_000_000L) break;
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          } finally {
            done.countDown();
          }
        }, "member-" + m);
        t.start();
      }
      done.await();
      if (failure.get() != null) throw new RuntimeException(failure.get());
      if (started.get() == null) throw new IllegalStateException("the group delivered no record");
      meter[0] = started.get();
    }
    System.out.println(meter[0].result(""));
  }

  /** Counts the records below each partition's end offset, once each (reached = next offset counted). */
  private static void count(ConsumerRecords<byte[], byte[]> rs, long[] ends, AtomicLongArray reached, Meter meter) {
    long n = 0;
    long bytes = 0;
    for (ConsumerRecord<byte[], byte[]> r : rs) {
      int p = r.partition();
      if (r.offset() >= ends[p]) continue;
      long prev = reached.get(p);
      if (r.offset() < prev) continue; // delivered again after a rebalance
      reached.set(p, r.offset() + 1);
      n++;
      bytes += r.value() == null ? 0 : r.value().length;
    }
    meter.records.addAndGet(n);
    meter.bytes.addAndGet(bytes);
  }

  // ------------------------------------------------------------------ failover helpers

  private static void leader(Map<String, String> a) throws Exception {
    String topic = a.get("topic");
    try (Admin admin = Admin.create(adminProps(a))) {
      if (topic == null) {
        // No topic: the active controller alone.
        System.out.println("{\"event\":\"result\",\"leader\":-1,\"isr\":0,\"controller\":" + controllerId(admin) + "}");
        return;
      }
      int partition = (int) num(a, "partition");
      TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
      TopicPartitionInfo p = d.partitions().get(partition);
      int leader = p.leader() == null ? -1 : p.leader().id();
      System.out.println("{\"event\":\"result\",\"leader\":" + leader + ",\"isr\":" + p.isr().size() + ",\"controller\":" + controllerId(admin) + "}");
    }
  }

  /** The KRaft quorum's leader (the active controller), or -1 when the quorum does not say. */
  private static int controllerId(Admin admin) {
    try {
      return admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS).leaderId();
    } catch (Exception e) {
      return -1;
    }
  }

  /** Waits (bounded by timeoutMs) until the partition has a leader and at least `isr` ISR members. */
  private static void isr(Map<String, String> a) throws Exception {
    String topic = need(a, "topic");
    int partition = (int) num(a, "partition");
    int want = (int) num(a, "isr");
    long deadline = System.currentTimeMillis() + num(a, "timeoutMs");
    String last = "no answer";
    try (Admin admin = Admin.create(adminProps(a))) {
      while (System.currentTimeMillis() < deadline) {
        try {
          TopicPartitionInfo p = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic).partitions().get(partition);
          if (p.leader() != null && p.isr().size() >= want) {
            System.out.println("{\"event\":\"result\",\"leader\":" + p.leader().id() + ",\"isr\":" + p.isr().size() + "}");
            return;
          }
          last = p.toString();
        } catch (Exception e) {
          last = String.valueOf(e);
        }
        Thread.sleep(100);
      }
    }
    throw new IllegalStateException(topic + "-" + partition + " has no leader with " + want + " ISR members: " + last);
  }

  private static double epochMs() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1000.0 + now.getNano() / 1e6;
  }

  private static void paced(Map<String, String> a) throws Exception {
    String topic = need(a, "topic");
    double rate = Double.parseDouble(need(a, "rate"));
    double seconds = Double.parseDouble(need(a, "seconds"));
    double gapMs = Double.parseDouble(a.getOrDefault("gapMs", "100"));
    AtomicLong acked = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    double[] lastAckMs = {epochMs()};
    // stdin closing (the bench ending the run) stops the sending.
    Thread stdin = new Thread(() -> {
      try {
        while (System.in.read() >= 0) { /* ignore input */ }
      } catch (IOException ignored) { /* closed */ }
    }, "stdin");
    stdin.setDaemon(true);
    stdin.start();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(a))) {
      producer.partitionsFor(topic);
      byte[] value = new byte[100];
      long start = System.nanoTime();
      long endNs = start + (long) (seconds * 1e9);
      long sent = 0;
      System.out.println("{\"event\":\"started\",\"atMs\":" + epochMs() + "}");
      while (stdin.isAlive() && System.nanoTime() < endNs) {
        long due = (long) ((System.nanoTime() - start) / 1e9 * rate) - sent;
        for (long i = 0; i < due; i++) {
          producer.send(new ProducerRecord<>(topic, 0, null, value), (md, err) -> {
            double now = epochMs();
            synchronized (lastAckMs) {
              if (err != null) {
                failed.incrementAndGet();
                System.out.println("{\"event\":\"send-error\",\"atMs\":" + now + ",\"message\":" + json(String.valueOf(err)) + "}");
                return;
              }
              acked.incrementAndGet();
              if (now - lastAckMs[0] >= gapMs) {
                System.out.println("{\"event\":\"ack\",\"atMs\":" + now + ",\"gapFromMs\":" + lastAckMs[0] + ",\"offset\":" + md.offset() + "}");
              }
              lastAckMs[0] = now;
            }
          });
        }
        sent += Math.max(0, due);
        Thread.sleep(1);
      }
      producer.flush();
      System.out.println("{\"event\":\"result\",\"sent\":" + sent + ",\"acked\":" + acked.get() + ",\"failed\":" + failed.get() + "}");
    }
  }

  private static final long FAILOVER_READ_MS_MAX = 60_000;
  private static final int LOST_SAMPLE_MAX = 10;

  private static void failover(Map<String, String> a) throws Exception {
    String topic = need(a, "topic");
    double rate = Double.parseDouble(need(a, "rate"));
    double seconds = Double.parseDouble(need(a, "seconds"));
    int valueBytes = Math.max(8, (int) num(a, "valueBytes"));
    BitSet acked = new BitSet();
    AtomicLong failed = new AtomicLong();
    Thread stdin = new Thread(() -> {
      try {
        while (System.in.read() >= 0) { /* ignore input */ }
      } catch (IOException ignored) { /* closed */ }
    }, "stdin");
    stdin.setDaemon(true);
    stdin.start();
    long sent = 0;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(a))) {
      producer.partitionsFor(topic);
      long start = System.nanoTime();
      long endNs = start + (long) (seconds * 1e9);
      System.out.println("{\"event\":\"started\",\"atMs\":" + epochMs() + "}");
      while (stdin.isAlive() && System.nanoTime() < endNs) {
        long due = (long) ((System.nanoTime() - start) / 1e9 * rate) - sent;
        for (long i = 0; i < due; i++) {
          final long seq = sent + i;
          byte[] value = new byte[valueBytes];
          ByteBuffer.wrap(value).putLong(0, seq);
          producer.send(new ProducerRecord<>(topic, 0, null, value), (md, err) -> {
            double now = epochMs();
            synchronized (acked) {
              if (err != null) {
                failed.incrementAndGet();
                System.out.println("{\"event\":\"send-error\",\"atMs\":" + now + ",\"seq\":" + seq + ",\"message\":" + json(String.valueOf(err)) + "}");
                return;
              }
              acked.set((int) seq);
              System.out.println("{\"event\":\"ack\",\"atMs\":" + now + ",\"seq\":" + seq + ",\"offset\":" + md.offset() + "}");
            }
          });
        }
        sent += Math.max(0, due);
        Thread.sleep(1);
      }
      producer.flush();
    }
    readBack(a, topic, sent, acked, failed.get());
  }

  /** Reads partition 0 from offset 0 to its end; prints the failover result (see the header). */
  private static void readBack(Map<String, String> a, String topic, long sent, BitSet acked, long failed) {
    BitSet found = new BitSet();
    long duplicates = 0;
    long records = 0;
    StringBuilder epochs = new StringBuilder("[");
    int lastEpoch = Integer.MIN_VALUE;
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(consumerProps(a, null))) {
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      long end = c.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
      long deadline = System.currentTimeMillis() + FAILOVER_READ_MS_MAX;
      while (c.position(tp) < end) {
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("read " + c.position(tp) + " of " + end + " offsets of " + topic + " within " + FAILOVER_READ_MS_MAX + " ms");
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
          if (r.offset() >= end) continue;
          records++;
          int seq = (int) ByteBuffer.wrap(r.value()).getLong(0);
          if (found.get(seq)) duplicates++;
          found.set(seq);
          int epoch = r.leaderEpoch().orElse(-1);
          if (epoch != lastEpoch) {
            epochs.append(lastEpoch == Integer.MIN_VALUE ? "" : ",").append('[').append(r.offset()).append(',').append(epoch).append(']');
            lastEpoch = epoch;
          }
        }
      }
    }
    BitSet lost;
    synchronized (acked) {
      lost = (BitSet) acked.clone();
    }
    int ackedCount = lost.cardinality();
    lost.andNot(found);
    StringBuilder sample = new StringBuilder("[");
    for (int i = lost.nextSetBit(0), n = 0; i >= 0 && n < LOST_SAMPLE_MAX; i = lost.nextSetBit(i + 1), n++) sample.append(n == 0 ? "" : ",").append(i);
    System.out.println("{\"event\":\"result\",\"sent\":" + sent + ",\"acked\":" + ackedCount + ",\"failed\":" + failed + ",\"records\":" + records
        + ",\"lost\":" + lost.cardinality() + ",\"lostSample\":" + sample.append(']') + ",\"duplicates\":" + duplicates + ",\"epochs\":" + epochs.append(']') + "}");
  }

  // ------------------------------------------------------------------ e2e

  private static void e2e(Map<String, String> a) throws Exception {
    String topic = need(a, "topic");
    double rate = Double.parseDouble(need(a, "rate"));
    double seconds = Double.parseDouble(need(a, "seconds"));
    double warmup = Double.parseDouble(need(a, "warmupSeconds"));
    int valueBytes = Math.max(8, (int) num(a, "valueBytes"));
    String latencyFile = need(a, "latencyFile");
    byte[][] fillers = randomValues(valueBytes);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicLong received = new AtomicLong();
    AtomicLong measured = new AtomicLong();
    long[] measureFromNs = {Long.MAX_VALUE};
    long[] target = {Long.MAX_VALUE};
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(a));
         KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(a, null));
         DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(latencyFile), 1 << 16))) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      consumer.position(tp);
      producer.partitionsFor(topic);
      // A first record, not measured: the producer's id and the first request.
      producer.send(new ProducerRecord<>(topic, 0, null, new byte[valueBytes])).get(30, TimeUnit.SECONDS);
      long drainDeadline[] = {Long.MAX_VALUE};
      Thread reader = new Thread(() -> {
        ByteBuffer le = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        try {
          long skip = 1;
          while (failure.get() == null && (received.get() < target[0]) && System.nanoTime() < drainDeadline[0]) {
            ConsumerRecords<byte[], byte[]> rs = consumer.poll(Duration.ofMillis(100));
            long arrived = System.nanoTime();
            for (ConsumerRecord<byte[], byte[]> r : rs) {
              if (skip > 0) { skip--; continue; }
              long sent = ByteBuffer.wrap(r.value()).getLong(0);
              received.incrementAndGet();
              if (sent < measureFromNs[0]) continue;
              measured.incrementAndGet();
              long us = Math.max(1, (arrived - sent) / 1000);
              le.clear();
              le.putInt((int) Math.min(Integer.MAX_VALUE, us));
              out.write(le.array());
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "e2e-reader");
      reader.start();
      long start = System.nanoTime();
      measureFromNs[0] = start + (long) (warmup * 1e9);
      long endNs = start + (long) ((warmup + seconds) * 1e9);
      long sent = 0;
      AtomicLong acked = new AtomicLong();
      Meter progress = new Meter();
      int cursor = 0;
      while (failure.get() == null) {
        long now = System.nanoTime();
        if (now >= endNs) break;
        long due = (long) ((now - start) / 1e9 * rate) - sent;
        for (long i = 0; i < due; i++) {
          byte[] v = fillers[cursor++ & (VALUE_POOL - 1)].clone();
          ByteBuffer.wrap(v).putLong(0, System.nanoTime());
          producer.send(new ProducerRecord<>(topic, 0, null, v), (md, err) -> {
            if (err != null) failure.compareAndSet(null, err);
            else acked.incrementAndGet();
          });
        }
        sent += Math.max(0, due);
        progress.records.set(received.get());
        progress.tick();
        Thread.sleep(1);
      }
      double sentSeconds = (System.nanoTime() - start) / 1e9;
      producer.flush();
      target[0] = sent;
      drainDeadline[0] = System.nanoTime() + DRAIN_MS_MAX * 1_000_000L;
      reader.join(DRAIN_MS_MAX + 5_000);
      if (failure.get() != null) throw new RuntimeException(failure.get());
      if (received.get() < sent) throw new IllegalStateException("the consumer received " + received.get() + " of " + sent + " records within " + DRAIN_MS_MAX + " ms of the last send");
      out.flush();
      System.out.println("{\"event\":\"result\",\"sent\":" + sent + ",\"received\":" + received.get() + ",\"measured\":" + measured.get()
          + ",\"sentSeconds\":" + sentSeconds + ",\"cpuSeconds\":" + (processCpuSeconds() - progress.cpu0) + "}");
    }
  }
}
