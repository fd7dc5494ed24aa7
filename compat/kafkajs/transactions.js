// kafkajs's transactional producer against the broker: commit and abort, read_committed against
// read_uncommitted readers, a zombie fenced by a newer instance, consume-transform-produce with
// sendOffsets. Prints "ok   kafkajs/<case>" or "FAIL kafkajs/<case>: ...".
const { Kafka, logLevel } = require('kafkajs');
const crypto = require('crypto');
const { report, runCase, finish, crashed } = require('./harness');

const bootstrap = process.argv[2];
const kafka = new Kafka({ clientId: 'compat-txn', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5 } });
const suffix = () => crypto.randomBytes(4).toString('hex');
const topic = `kj-txn-${suffix()}`;
const source = `kj-txn-in-${suffix()}`;
const sink = `kj-txn-out-${suffix()}`;

async function transactionalProducer(transactionalId) {
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return producer;
}

// Every value of the topic, sorted, read with a group-less consumer until `expected` arrived.
async function readAll(topicName, readUncommitted, expected) {
  const consumer = kafka.consumer({ groupId: `kj-reader-${suffix()}`, readUncommitted });
  await consumer.connect();
  await consumer.subscribe({ topic: topicName, fromBeginning: true });
  const values = [];
  await consumer.run({ autoCommit: false, eachMessage: async ({ message }) => { values.push(message.value.toString()); } });
  const deadline = Date.now() + 30000;
  while (values.length < expected && Date.now() < deadline) await new Promise(r => setTimeout(r, 200));
  await new Promise(r => setTimeout(r, 1000)); // anything beyond `expected` would show up now
  await consumer.disconnect();
  return values.sort();
}

const range = (n) => [...Array(n).keys()];

(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [topic, source, sink].map(t => ({ topic: t, numPartitions: 2 })), waitForLeaders: true });

  await runCase('txn-commit-and-abort', async () => {
    const producer = await transactionalProducer(`kj-txn-${suffix()}`);
    for (const [round, commit] of [['a', true], ['b', false], ['c', true]]) {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: range(10).map(i => ({ value: `${round}${i}`, partition: i % 2 })) });
      if (commit) await txn.commit(); else await txn.abort();
    }
    await producer.disconnect();
    const committed = [...range(10).map(i => `a${i}`), ...range(10).map(i => `c${i}`)].sort();
    const everything = [...committed, ...range(10).map(i => `b${i}`)].sort();
    const seenCommitted = await readAll(topic, false, committed.length);
    report('txn-read-committed-sees-committed-only', JSON.stringify(seenCommitted) === JSON.stringify(committed), JSON.stringify(seenCommitted));
    const seenAll = await readAll(topic, true, everything.length);
    report('txn-read-uncommitted-sees-all', JSON.stringify(seenAll) === JSON.stringify(everything), JSON.stringify(seenAll));
  });

  await runCase('txn-zombie-fenced', async () => {
    const transactionalId = `kj-zombie-${suffix()}`;
    const zombie = await transactionalProducer(transactionalId);
    const zombieTxn = await zombie.transaction();
    await zombieTxn.send({ topic, messages: [{ value: 'zombie', partition: 0 }] });
    const successor = await transactionalProducer(transactionalId);
    // kafkajs sends InitProducerId for its transactional id on the first transaction(): that
    // bumps the epoch and aborts the zombie's open transaction.
    const txn = await successor.transaction();
    let error = null;
    try { await zombieTxn.commit(); } catch (e) { error = e; }
    report('txn-zombie-fenced', error !== null && /EPOCH|FENCED/i.test(`${error.type} ${error.message}`), String(error));
    await txn.send({ topic, messages: [{ value: 'successor', partition: 0 }] });
    await txn.commit();
    await successor.disconnect();
    await zombie.disconnect().catch(() => {});
    const seen = await readAll(topic, false, 21);
    report('txn-zombie-write-aborted', seen.includes('successor') && !seen.includes('zombie'), JSON.stringify(seen));
  });

  await runCase('txn-consume-transform-produce', async () => {
    const plain = kafka.producer();
    await plain.connect();
    await plain.send({ topic: source, messages: range(20).map(i => ({ value: `${i}`, partition: i % 2 })) });
    await plain.disconnect();
    const groupId = `kj-txn-group-${suffix()}`;

    // Consumes up to `limit` records, writes them doubled, sends the offsets, commits or aborts.
    async function processRound(commit, limit) {
      const consumer = kafka.consumer({ groupId, readUncommitted: false });
      await consumer.connect();
      await consumer.subscribe({ topic: source, fromBeginning: true });
      const records = [];
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) if (records.length < limit) records.push({ partition: batch.partition, offset: Number(message.offset), value: message.value.toString() });
        },
      });
      const deadline = Date.now() + 30000;
      while (records.length < limit && Date.now() < deadline) await new Promise(r => setTimeout(r, 200));
      await new Promise(r => setTimeout(r, 500));
      await consumer.disconnect();
      const producer = await transactionalProducer(`kj-ctp-${groupId}`);
      const txn = await producer.transaction();
      await txn.send({ topic: sink, messages: records.map(r => ({ value: `${2 * Number(r.value)}`, partition: r.partition })) });
      const next = {};
      for (const r of records) next[r.partition] = Math.max(next[r.partition] ?? 0, r.offset + 1);
      await txn.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: source, partitions: Object.entries(next).map(([partition, offset]) => ({ partition: Number(partition), offset: `${offset}` })) }] });
      if (commit) await txn.commit(); else await txn.abort();
      await producer.disconnect();
      return records.length;
    }

    const first = await processRound(true, 8);
    await processRound(false, 6); // aborted: its output and its offsets must vanish
    await processRound(true, 12); // resumes at the committed offsets, takes the rest
    const offsets = await admin.fetchOffsets({ groupId, topics: [source] });
    const committed = offsets[0].partitions.reduce((n, p) => n + Number(p.offset), 0);
    const output = await readAll(sink, false, 20);
    const expected = range(20).map(i => `${2 * i}`).sort();
    report('txn-consume-transform-produce-exactly-once', first === 8 && JSON.stringify(output) === JSON.stringify(expected), `first round ${first}, output ${JSON.stringify(output)}`);
    report('txn-offsets-committed-with-transaction', committed === 20, `committed ${committed}`);
  });

  await admin.disconnect();
  finish();
})().catch(crashed);
