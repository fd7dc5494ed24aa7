package dev.sluice.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Kafka Streams' word count with exactly_once_v2, for compat/streams/run:
 *   produce BOOTSTRAP TOPIC LINES     writes LINES lines of the words w0..w9 (line i holds
 *                                     w(i%10) .. w((i+4)%10))
 *   app BOOTSTRAP APP_ID IN OUT STATE runs the topology until killed; prints "processed N"
 *   check BOOTSTRAP OUT LINES         reads OUT read_committed and checks every word's counts
 *                                     came out exactly once each: 1, 2, ..., its total
 * With the record cache off, each word read produces one count update; under exactly-once a
 * crash may not duplicate or lose one, however the app was killed.
 */
public final class WordCount {
    static final int WORDS_PER_LINE = 5;

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]));
            case "app" -> app(args[1], args[2], args[3], args[4], args[5]);
            case "check" -> System.exit(check(args[1], args[2], Integer.parseInt(args[3])) ? 0 : 1);
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static String line(int i) {
        StringBuilder b = new StringBuilder();
        for (int w = 0; w < WORDS_PER_LINE; w++) b.append(w == 0 ? "" : " ").append("w").append((i + w) % 10);
        return b.toString();
    }

    static void produce(String bootstrap, String topic, int lines) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < lines; i++) producer.send(new ProducerRecord<>(topic, Integer.toString(i), line(i)));
        }
    }

    static void app(String bootstrap, String appId, String in, String out, String stateDir) throws Exception {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        // "classic" (the consumer group protocol) or "streams" (KIP-1071, the broker assigns tasks).
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, System.getenv().getOrDefault("STREAMS_GROUP_PROTOCOL", "classic"));
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        // Commits a second apart, and output sent as soon as it is made: at the SIGKILL the broker
        // holds output of the open transaction, which it must abort.
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1000);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 0);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 200);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        AtomicLong processed = new AtomicLong();
        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(in)
                .peek((k, v) -> throttle(processed.incrementAndGet()))
                .flatMapValues(v -> List.of(v.split(" ")))
                .groupBy((k, word) -> word)
                .count()
                .toStream()
                .to(out, Produced.with(Serdes.String(), Serdes.Long()));
        KafkaStreams streams = new KafkaStreams(builder.build(), p);
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
        long last = -1;
        while (true) {
            long now = processed.get();
            if (now != last) {
                System.out.println("processed " + now + " state " + streams.state());
                last = now;
            }
            Thread.sleep(200);
        }
    }

    /** Slows the app down (5 ms every 50 lines), so that it is killed between commits with
     *  output written since the last one, which exactly-once must abort. */
    static void throttle(long processed) {
        if (processed % 50 == 0) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static boolean check(String bootstrap, String topic, int lines) throws Exception {
        Map<String, Long> expected = new HashMap<>();
        for (int i = 0; i < lines; i++) for (String w : line(i).split(" ")) expected.merge(w, 1L, Long::sum);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, List<Long>> counts = new HashMap<>();
        long total = expected.values().stream().mapToLong(Long::longValue).sum();
        long got = 0;
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> partitions = new ArrayList<>();
            c.partitionsFor(topic).forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
            c.assign(partitions);
            c.seekToBeginning(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (got < total && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(500))) {
                    counts.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                    got++;
                }
            }
            for (ConsumerRecord<String, Long> r : c.poll(Duration.ofSeconds(2))) {
                counts.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                got++;
            }
        }
        boolean ok = true;
        for (Map.Entry<String, Long> e : expected.entrySet()) {
            List<Long> seen = counts.getOrDefault(e.getKey(), List.of());
            boolean exact = seen.size() == e.getValue();
            for (int i = 0; exact && i < seen.size(); i++) exact = seen.get(i) == i + 1;
            if (!exact) {
                ok = false;
                System.out.printf("word %s: %d updates (expected %d), first out of order at %s%n", e.getKey(), seen.size(), e.getValue(),
                        firstGap(seen));
            }
        }
        System.out.printf("%d count updates read, %d expected%n", got, total);
        return ok && got == total;
    }

    static String firstGap(List<Long> seen) {
        for (int i = 0; i < seen.size(); i++) if (seen.get(i) != i + 1) return "index " + i + " (" + seen.get(i) + ")";
        return "none";
    }
}
