// Go clients against one broker: IBM/sarama (producer with every codec and idempotence,
// transactions, consumer group, cluster admin), segmentio/kafka-go (writer, group reader,
// topic admin) and franz-go (kgo: produce and a group consumer, transactions; kadm: admin).
// Prints "ok   go/CASE" or "FAIL go/CASE: why"; compat/go/run counts them.
//
// Usage: go run . BOOTSTRAP [CASE...]
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	bootstrap string
	run       = fmt.Sprint(time.Now().UnixNano() % 1_000_000)
)

type testCase struct {
	name string
	fn   func() error
}

func main() {
	bootstrap = os.Args[1]
	only := map[string]bool{}
	for _, name := range os.Args[2:] {
		only[name] = true
	}
	var cases []testCase
	cases = append(cases, perCodec("sarama-produce-", saramaProduce)...)
	cases = append(cases,
		testCase{"sarama-transactions", saramaTransactions},
		testCase{"sarama-consumer-group", saramaConsumerGroup},
		testCase{"sarama-admin", saramaAdmin},
		testCase{"kafka-go-writer-and-group-reader", kafkaGoWriterReader},
		testCase{"kafka-go-topics", kafkaGoTopics},
	)
	cases = append(cases, perCodec("kgo-produce-", kgoProduce)...)
	cases = append(cases,
		testCase{"kgo-consumer-group", kgoConsumerGroup},
		testCase{"kgo-transactions", kgoTransactions},
		testCase{"kadm-admin", kadmAdmin},
	)
	for _, c := range cases {
		if len(only) > 0 && !only[c.name] {
			continue
		}
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- c.fn() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(90 * time.Second):
			err = errors.New("did not finish within 90 s")
		}
		if err != nil {
			fmt.Printf("FAIL go/%s: %s\n", c.name, strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Printf("ok   go/%s\n", c.name)
		}
		fmt.Fprintf(os.Stderr, "-- %s took %d ms\n", c.name, time.Since(start).Milliseconds())
	}
}

// One case per codec: prefix + codec name, running fn(codec).
func perCodec(prefix string, fn func(codec string) error) []testCase {
	var out []testCase
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		out = append(out, testCase{prefix + codec, func() error { return fn(codec) }})
	}
	return out
}

func topicName(name string) string { return "go-" + name + "-" + run }

// Retries f for up to 10 s while it fails (metadata that Kafka propagates asynchronously).
func eventually(f func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ---- sarama

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.ClientID = "sluice-compat-sarama"
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	return cfg
}

func saramaCreateTopic(name string, partitions int32, entries map[string]*string) error {
	admin, err := sarama.NewClusterAdmin([]string{bootstrap}, saramaConfig())
	if err != nil {
		return err
	}
	defer admin.Close()
	return admin.CreateTopic(name, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: entries}, false)
}

// Reads `want` messages from partition 0 of topic from the start.
func saramaRead(topic string, partition int32, want int, cfg *sarama.Config) ([]*sarama.ConsumerMessage, error) {
	consumer, err := sarama.NewConsumer([]string{bootstrap}, cfg)
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, partition, sarama.OffsetOldest)
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	var got []*sarama.ConsumerMessage
	deadline := time.After(30 * time.Second)
	for len(got) < want {
		select {
		case m := <-pc.Messages():
			got = append(got, m)
		case e := <-pc.Errors():
			return got, e
		case <-deadline:
			return got, fmt.Errorf("read %d of %d", len(got), want)
		}
	}
	select {
	case m := <-pc.Messages():
		return got, fmt.Errorf("an extra message at offset %d", m.Offset)
	case <-time.After(300 * time.Millisecond):
	}
	return got, nil
}

func saramaProduce(codec string) error {
	topic := topicName("sarama-" + codec)
	if err := saramaCreateTopic(topic, 1, nil); err != nil {
		return err
	}
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	if err := cfg.Producer.Compression.UnmarshalText([]byte(codec)); err != nil {
		return err
	}
	producer, err := sarama.NewSyncProducer([]string{bootstrap}, cfg)
	if err != nil {
		return err
	}
	var messages []*sarama.ProducerMessage
	for i := 0; i < 500; i++ {
		messages = append(messages, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprint("k", i)),
			Value:   sarama.StringEncoder(fmt.Sprint("v", i, strings.Repeat("x", i%40))),
			Headers: []sarama.RecordHeader{{Key: []byte("i"), Value: []byte(fmt.Sprint(i))}}})
	}
	if err := producer.SendMessages(messages); err != nil {
		producer.Close()
		return err
	}
	producer.Close()
	got, err := saramaRead(topic, 0, 500, saramaConfig())
	if err != nil {
		return err
	}
	for i, m := range got {
		if m.Offset != int64(i) || string(m.Key) != fmt.Sprint("k", i) || string(m.Value) != fmt.Sprint("v", i, strings.Repeat("x", i%40)) {
			return fmt.Errorf("message %d: offset %d key %s", i, m.Offset, m.Key)
		}
		if len(m.Headers) != 1 || string(m.Headers[0].Value) != fmt.Sprint(i) {
			return fmt.Errorf("message %d headers %v", i, m.Headers)
		}
	}
	return nil
}

func saramaTransactions() error {
	topic := topicName("sarama-txn")
	if err := saramaCreateTopic(topic, 1, nil); err != nil {
		return err
	}
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Transaction.ID = "go-sarama-txn-" + run
	producer, err := sarama.NewSyncProducer([]string{bootstrap}, cfg)
	if err != nil {
		return err
	}
	defer producer.Close()
	for _, outcome := range []string{"commit", "abort", "commit"} {
		if err := producer.BeginTxn(); err != nil {
			return err
		}
		for i := 0; i < 5; i++ {
			if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(outcome)}); err != nil {
				return err
			}
		}
		if outcome == "commit" {
			err = producer.CommitTxn()
		} else {
			err = producer.AbortTxn()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", outcome, err)
		}
	}
	readCommitted := saramaConfig()
	readCommitted.Consumer.IsolationLevel = sarama.ReadCommitted
	got, err := saramaRead(topic, 0, 10, readCommitted)
	if err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	for _, m := range got {
		if string(m.Value) != "commit" {
			return fmt.Errorf("read_committed saw %q at %d", m.Value, m.Offset)
		}
	}
	if _, err := saramaRead(topic, 0, 15, saramaConfig()); err != nil {
		return fmt.Errorf("read_uncommitted: %w", err)
	}
	return nil
}

type saramaHandler struct {
	mu       sync.Mutex
	seen     map[string]bool
	claimed  map[int32]bool
	messages int
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *saramaHandler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.mu.Lock()
		h.seen[string(m.Value)] = true
		h.claimed[m.Partition] = true
		h.messages++
		h.mu.Unlock()
		session.MarkMessage(m, "")
	}
	return nil
}

func saramaConsumerGroup() error {
	topic := topicName("sarama-group")
	group := "go-sarama-group-" + run
	if err := saramaCreateTopic(topic, 4, nil); err != nil {
		return err
	}
	manual := saramaConfig()
	manual.Producer.Partitioner = sarama.NewManualPartitioner
	producer, err := sarama.NewSyncProducer([]string{bootstrap}, manual)
	if err != nil {
		return err
	}
	for i := 0; i < 100; i++ {
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: int32(i % 4), Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			producer.Close()
			return err
		}
	}
	producer.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	handlers := []*saramaHandler{}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		cfg := saramaConfig()
		cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
		g, err := sarama.NewConsumerGroup([]string{bootstrap}, group, cfg)
		if err != nil {
			return err
		}
		h := &saramaHandler{seen: map[string]bool{}, claimed: map[int32]bool{}}
		handlers = append(handlers, h)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer g.Close()
			for ctx.Err() == nil {
				if err := g.Consume(ctx, []string{topic}, h); err != nil && ctx.Err() == nil {
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	deadline := time.Now().Add(45 * time.Second)
	for {
		seen := map[string]bool{}
		for _, h := range handlers {
			h.mu.Lock()
			for k := range h.seen {
				seen[k] = true
			}
			h.mu.Unlock()
		}
		if len(seen) == 100 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the group consumed %d of 100", len(seen))
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // one more auto-commit
	cancel()
	wg.Wait()
	admin, err := sarama.NewClusterAdmin([]string{bootstrap}, saramaConfig())
	if err != nil {
		return err
	}
	defer admin.Close()
	offsets, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1, 2, 3}})
	if err != nil {
		return err
	}
	for p := int32(0); p < 4; p++ {
		block := offsets.GetBlock(topic, p)
		if block == nil || block.Offset != 25 {
			return fmt.Errorf("committed offset of partition %d: %+v", p, block)
		}
	}
	return nil
}

func saramaAdmin() error {
	topic := topicName("sarama-admin")
	admin, err := sarama.NewClusterAdmin([]string{bootstrap}, saramaConfig())
	if err != nil {
		return err
	}
	defer admin.Close()
	retention := "3600000"
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1,
		ConfigEntries: map[string]*string{"retention.ms": &retention}}, false); err != nil {
		return err
	}
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return fmt.Errorf("creating it again: %v", err)
	}
	topics, err := admin.ListTopics()
	if err != nil {
		return err
	}
	if d, ok := topics[topic]; !ok || d.NumPartitions != 2 {
		return fmt.Errorf("ListTopics: %+v", topics[topic])
	}
	if err := admin.CreatePartitions(topic, 3, nil, false); err != nil {
		return fmt.Errorf("CreatePartitions: %w", err)
	}
	// Kafka's brokers learn of the new partition a moment after CreatePartitions returns.
	var described []*sarama.TopicMetadata
	err = eventually(func() error {
		described, err = admin.DescribeTopics([]string{topic})
		if err == nil && (len(described) != 1 || len(described[0].Partitions) != 3) {
			err = fmt.Errorf("%d partitions", len(described[0].Partitions))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("DescribeTopics: %w", err)
	}
	entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic})
	if err != nil {
		return err
	}
	found := false
	for _, e := range entries {
		if e.Name == "retention.ms" && e.Value == "3600000" {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("DescribeConfig lacks retention.ms=3600000")
	}
	compact := "compact"
	if err := admin.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"cleanup.policy": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &compact}}, false); err != nil {
		return fmt.Errorf("IncrementalAlterConfig: %w", err)
	}
	brokers, controller, err := admin.DescribeCluster()
	if err != nil || len(brokers) == 0 || controller < 0 {
		return fmt.Errorf("DescribeCluster: %v %v %d", err, brokers, controller)
	}
	if _, err := admin.ListConsumerGroups(); err != nil {
		return fmt.Errorf("ListConsumerGroups: %w", err)
	}
	if err := admin.DeleteTopic(topic); err != nil {
		return err
	}
	return nil
}

// ---- kafka-go

func kafkaGoWriterReader() error {
	topic := topicName("kafka-go")
	group := "go-kafka-go-" + run
	conn, err := kafkago.Dial("tcp", bootstrap)
	if err != nil {
		return err
	}
	if err := conn.CreateTopics(kafkago.TopicConfig{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}); err != nil {
		conn.Close()
		return err
	}
	conn.Close()
	// Kafka answers CreateTopics before its broker's metadata has the topic (its first
	// produce can meet UNKNOWN_TOPIC_OR_PARTITION, which the Writer does not retry): wait.
	if err := waitForPartitions(topic, 3); err != nil {
		return err
	}
	w := &kafkago.Writer{Addr: kafkago.TCP(bootstrap), Topic: topic, Balancer: &kafkago.Hash{},
		Compression: kafkago.Snappy, RequiredAcks: kafkago.RequireAll, BatchTimeout: 10 * time.Millisecond}
	var messages []kafkago.Message
	for i := 0; i < 300; i++ {
		messages = append(messages, kafkago.Message{Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint(i))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, messages...); err != nil {
		w.Close()
		return err
	}
	w.Close()
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{bootstrap}, GroupID: group, Topic: topic,
		StartOffset: kafkago.FirstOffset, MaxWait: 200 * time.Millisecond})
	seen := map[string]bool{}
	for len(seen) < 300 {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			r.Close()
			return fmt.Errorf("after %d messages: %w", len(seen), err)
		}
		seen[string(m.Value)] = true
		if err := r.CommitMessages(ctx, m); err != nil {
			r.Close()
			return err
		}
	}
	r.Close()
	// A second reader of the group has nothing left.
	r2 := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{bootstrap}, GroupID: group, Topic: topic,
		StartOffset: kafkago.FirstOffset, MaxWait: 200 * time.Millisecond})
	defer r2.Close()
	short, cancelShort := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelShort()
	if m, err := r2.FetchMessage(short); err == nil {
		return fmt.Errorf("the group read offset %d of partition %d again", m.Offset, m.Partition)
	}
	return nil
}

// waitForPartitions polls until the broker's metadata lists `count` partitions of `topic`.
func waitForPartitions(topic string, count int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := kafkago.Dial("tcp", bootstrap); err == nil {
			partitions, err := c.ReadPartitions(topic)
			c.Close()
			if err == nil && len(partitions) == count {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s has not %d partitions in the metadata after 30 s", topic, count)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func kafkaGoTopics() error {
	topic := topicName("kafka-go-admin")
	client := &kafkago.Client{Addr: kafkago.TCP(bootstrap), Timeout: 30 * time.Second}
	ctx := context.Background()
	created, err := client.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}}})
	if err != nil || created.Errors[topic] != nil {
		return fmt.Errorf("CreateTopics: %v %v", err, created)
	}
	md, err := client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2 {
		return fmt.Errorf("Metadata: %v %+v", err, md)
	}
	// Kafka's leader may not serve the new partition the moment CreateTopics returns.
	err = eventually(func() error {
		offsets, err := client.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{topic: {kafkago.LastOffsetOf(0)}}})
		if err == nil && (offsets.Topics[topic][0].Error != nil || offsets.Topics[topic][0].LastOffset != 0) {
			err = fmt.Errorf("%+v", offsets.Topics[topic])
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("ListOffsets: %w", err)
	}
	deleted, err := client.DeleteTopics(ctx, &kafkago.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil || deleted.Errors[topic] != nil {
		return fmt.Errorf("DeleteTopics: %v %v", err, deleted)
	}
	return nil
}

// ---- franz-go

func kgoClient(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap)}, opts...)...)
}

func kadmCreate(topic string, partitions int32) error {
	cl, err := kgoClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = kadm.NewClient(cl).CreateTopic(context.Background(), partitions, 1, nil, topic)
	return err
}

func kgoProduce(codec string) error {
	topic := topicName("kgo-" + codec)
	if err := kadmCreate(topic, 1); err != nil {
		return err
	}
	codecs := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}
	cl, err := kgoClient(kgo.ProducerBatchCompression(codecs[codec]), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return err
	}
	var records []*kgo.Record
	for i := 0; i < 1000; i++ {
		records = append(records, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(strings.Repeat(fmt.Sprint(i%10), 50)),
			Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(fmt.Sprint(i))}}})
	}
	if err := cl.ProduceSync(context.Background(), records...).FirstErr(); err != nil {
		cl.Close()
		return err
	}
	cl.Close()
	reader, err := kgoClient(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer reader.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []*kgo.Record
	for len(got) < 1000 {
		fetches := reader.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			return fmt.Errorf("after %d records: %w", len(got), err)
		}
		got = append(got, fetches.Records()...)
	}
	for i, r := range got {
		if r.Offset != int64(i) || string(r.Key) != fmt.Sprint(i) || len(r.Headers) != 1 || string(r.Headers[0].Value) != fmt.Sprint(i) {
			return fmt.Errorf("record %d: offset %d key %s", i, r.Offset, r.Key)
		}
	}
	return nil
}

func kgoConsumerGroup() error {
	topic := topicName("kgo-group")
	group := "go-kgo-group-" + run
	if err := kadmCreate(topic, 4); err != nil {
		return err
	}
	cl, err := kgoClient(kgo.DefaultProduceTopic(topic))
	if err != nil {
		return err
	}
	var records []*kgo.Record
	for i := 0; i < 200; i++ {
		records = append(records, &kgo.Record{Value: []byte(fmt.Sprint(i)), Partition: int32(i % 4)})
	}
	if err := cl.ProduceSync(context.Background(), records...).FirstErr(); err != nil {
		cl.Close()
		return err
	}
	cl.Close()
	consume := func(want int) (map[string]bool, error) {
		c, err := kgoClient(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			return nil, err
		}
		defer c.Close()
		seen := map[string]bool{}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(5+25*min(want, 1))*time.Second)
		defer cancel()
		for len(seen) < want || want == 0 {
			fetches := c.PollFetches(ctx)
			if ctx.Err() != nil {
				break
			}
			if err := fetches.Err(); err != nil {
				return seen, err
			}
			fetches.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
			if err := c.CommitUncommittedOffsets(context.Background()); err != nil {
				return seen, err
			}
		}
		return seen, nil
	}
	first, err := consume(200)
	if err != nil || len(first) != 200 {
		return fmt.Errorf("the group read %d of 200: %v", len(first), err)
	}
	again, err := consume(0)
	if err != nil || len(again) != 0 {
		return fmt.Errorf("after its commit the group read %d again: %v", len(again), err)
	}
	cl, err = kgoClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	lag, err := kadm.NewClient(cl).Lag(context.Background(), group)
	if err != nil {
		return err
	}
	if total := lag[group].Lag.Total(); total != 0 {
		return fmt.Errorf("lag %d after the commit", total)
	}
	return nil
}

func kgoTransactions() error {
	topic := topicName("kgo-txn")
	if err := kadmCreate(topic, 1); err != nil {
		return err
	}
	cl, err := kgoClient(kgo.TransactionalID("go-kgo-txn-"+run), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	for _, outcome := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		for i := 0; i < 5; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(bool(outcome)))}).FirstErr(); err != nil {
				return err
			}
		}
		if err := cl.EndTransaction(ctx, outcome); err != nil {
			return err
		}
	}
	reader, err := kgoClient(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return err
	}
	defer reader.Close()
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var values []string
	for short.Err() == nil && len(values) <= 10 {
		fetches := reader.PollFetches(short)
		fetches.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
		if len(values) == 10 {
			// a moment more, to see that nothing aborted follows
			more, c := context.WithTimeout(ctx, 500*time.Millisecond)
			reader.PollFetches(more).EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
			c()
			break
		}
	}
	if len(values) != 10 || strings.Contains(strings.Join(values, ","), "false") {
		return fmt.Errorf("read_committed read %v", values)
	}
	return nil
}

func kadmAdmin() error {
	topic := topicName("kadm")
	cl, err := kgoClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	retention := "3600000"
	if _, err := adm.CreateTopic(ctx, 3, 1, map[string]*string{"retention.ms": &retention}, topic); err != nil {
		return err
	}
	details, err := adm.ListTopics(ctx, topic)
	if err != nil || details[topic].Err != nil || len(details[topic].Partitions) != 3 {
		return fmt.Errorf("ListTopics: %v %+v", err, details[topic])
	}
	configs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return err
	}
	rc, err := configs.On(topic, nil)
	if err != nil {
		return err
	}
	found := false
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" && c.MaybeValue() == "3600000" {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("DescribeTopicConfigs lacks retention.ms")
	}
	if _, err := adm.CreatePartitions(ctx, 2, topic); err != nil {
		return fmt.Errorf("CreatePartitions: %w", err)
	}
	err = eventually(func() error {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		var partitions []int32
		ends.Each(func(o kadm.ListedOffset) { partitions = append(partitions, o.Partition) })
		sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })
		if fmt.Sprint(partitions) != "[0 1 2 3 4]" {
			return fmt.Errorf("end offsets of partitions %v", partitions)
		}
		return nil
	})
	if err != nil {
		return err
	}
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil || len(meta.Brokers) == 0 || meta.Controller < 0 {
		return fmt.Errorf("BrokerMetadata: %v %+v", err, meta)
	}
	if _, err := adm.ApiVersions(ctx); err != nil {
		return fmt.Errorf("ApiVersions: %w", err)
	}
	if _, err := adm.DeleteTopics(ctx, topic); err != nil {
		return err
	}
	return nil
}
