// kafkajs against the broker: admin, produce, a consumer group splitting partitions, commits,
// resuming from committed offsets. Prints "ok   kafkajs/<case>" or "FAIL kafkajs/<case>: ...".
const { Kafka, logLevel } = require('kafkajs');
const crypto = require('crypto');
const { report, runCase, finish, crashed } = require('./harness');

const bootstrap = process.argv[2];
const kafka = new Kafka({ clientId: 'compat', brokers: [bootstrap], logLevel: logLevel.ERROR, retry: { retries: 5 } });
const topic = `kj-${crypto.randomBytes(4).toString('hex')}`;
const group = `kj-group-${crypto.randomBytes(4).toString('hex')}`;
const count = 300;

async function consumeAll(members, received) {
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    const total = Object.values(received).reduce((n, v) => n + v.length, 0);
    if (total >= count) return;
    await new Promise(r => setTimeout(r, 200));
  }
}

(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await runCase('admin-create-topic', async () => {
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    report('admin-create-topic', (await admin.listTopics()).includes(topic));
  });

  await runCase('produce', async () => {
    const producer = kafka.producer();
    await producer.connect();
    const messages = [...Array(count).keys()].map(i => ({ key: `k${i}`, value: `v${i}`, partition: i % 3 }));
    const result = await producer.send({ topic, messages });
    await producer.disconnect();
    report('produce', result.length === 3 && result.every(r => r.errorCode === 0), JSON.stringify(result));
  });

  await runCase('group-split-and-commit', async () => {
    const received = {};
    const members = [];
    // kafkajs restarts a consumer whose connection closes while it rejoins, even when
    // disconnect() closed it (the other member's leave starts a rebalance): the restarted
    // consumer would join the group again. Restart only while the case is running.
    let stopping = false;
    const retry = { restartOnFailure: async () => !stopping };
    for (const name of ['m0', 'm1']) {
      const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, rebalanceTimeout: 10000, heartbeatInterval: 1000, retry });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      received[name] = [];
      await consumer.run({ eachMessage: async ({ partition, message }) => { received[name].push([partition, message.value.toString()]); } });
      members.push(consumer);
    }
    await consumeAll(members, received);
    await new Promise(r => setTimeout(r, 1000));
    stopping = true;
    for (const c of members) await c.disconnect();
    const values = Object.values(received).flat().map(([, v]) => v).sort();
    const expected = [...Array(count).keys()].map(i => `v${i}`).sort();
    report('group-split-and-commit', JSON.stringify(values) === JSON.stringify(expected), `${values.length} values`);
  });

  await runCase('group-offsets-committed', async () => {
    const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    const byPartition = offsets[0].partitions.map(p => `${p.partition}:${p.offset}`).sort().join(',');
    report('group-offsets-committed', byPartition === '0:100,1:100,2:100', byPartition);
  });

  await runCase('admin-describe-and-delete-group', async () => {
    const listed = (await admin.listGroups()).groups.map(g => g.groupId);
    report('admin-list-groups', listed.includes(group), JSON.stringify(listed));
    // A member disconnected while it rejoined (the other's leave started a rebalance) sends
    // no LeaveGroup: the group waits for it until its session times out, on Kafka as here.
    let described;
    const deadline = Date.now() + 45000;
    do {
      described = await admin.describeGroups([group]);
      if (described.groups[0].state === 'Empty') break;
      await new Promise(r => setTimeout(r, 500));
    } while (Date.now() < deadline);
    report('admin-describe-group', described.groups[0].state === 'Empty', JSON.stringify(described.groups[0].state));
    await admin.deleteGroups([group]);
    const after = (await admin.listGroups()).groups.map(g => g.groupId);
    report('admin-delete-group', !after.includes(group), JSON.stringify(after));
  });

  await admin.disconnect();
  finish();
})().catch(crashed);
