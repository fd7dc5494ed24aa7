// kafkajs against the secure broker of lib.sh's start_secure_broker: SSL with and without a
// client certificate, SASL PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 / OAUTHBEARER over
// SASL_PLAINTEXT and SASL_SSL, a wrong password refused, ACLs made, described and deleted with
// the admin client (deny, then allow), and a certificate's mapped principal meeting an ACL.
// Usage: node security.js SSL SASL_PLAINTEXT SASL_SSL MTLS PKI_DIR
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const {
  Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes,
} = require('kafkajs');
const { report, runCase, finish, crashed } = require('./harness');

const [ssl, saslPlaintext, saslSsl, mtls, pki] = process.argv.slice(2);
const ca = [fs.readFileSync(path.join(pki, 'ca.pem'), 'utf-8')];
const clientCert = {
  ca,
  cert: fs.readFileSync(path.join(pki, 'client.pem'), 'utf-8'),
  key: fs.readFileSync(path.join(pki, 'client.key'), 'utf-8'),
};
const unique = prefix => `${prefix}-${crypto.randomBytes(4).toString('hex')}`;

function client(broker, extra) {
  return new Kafka({
    clientId: 'compat-security', brokers: [broker], logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 200 }, connectionTimeout: 5000, ...extra,
  });
}

const plain = (username, password) => ({ mechanism: 'plain', username, password });
const admin = client(saslPlaintext, { sasl: plain('admin', 'admin-secret') });

// An unsecured JWS (alg none) as Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes it.
function unsecuredToken(sub) {
  const b64 = value => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none' })}.${b64({ sub, iat: now, exp: now + 3600 })}.`;
}

// Creates a topic (as admin), produces `count` records and reads them back with a group.
async function roundTrip(kafka, name, count = 20) {
  const topic = unique(name);
  const a = admin.admin();
  await a.connect();
  await a.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await a.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [...Array(count).keys()].map(i => ({ value: `v${i}` })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: unique('g'), sessionTimeout: 10000 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = [];
  await consumer.run({ eachMessage: async ({ message }) => { seen.push(message.value.toString()); } });
  const deadline = Date.now() + 30000;
  while (seen.length < count && Date.now() < deadline) await new Promise(r => setTimeout(r, 100));
  await consumer.disconnect();
  report(name, seen.length === count, `${seen.length} of ${count} records read back`);
}

// The error a single produce ends with ('' when it succeeds).
async function produceError(kafka, topic) {
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  try {
    await producer.send({ topic, messages: [{ value: 'x' }] });
    return '';
  } catch (e) {
    // Retries exhausted (or none allowed) wrap the broker's error.
    let root = e;
    while (root.cause) root = root.cause;
    return root.type || root.name || String(root);
  } finally {
    await producer.disconnect();
  }
}

(async () => {
  await runCase('ssl', () => roundTrip(client(ssl, { ssl: { ca } }), 'ssl'));
  await runCase('ssl-client-certificate', () => roundTrip(client(mtls, { ssl: clientCert }), 'ssl-client-certificate'));
  await runCase('sasl-plaintext-plain', () => roundTrip(client(saslPlaintext, { sasl: plain('alice', 'alice-secret') }), 'sasl-plaintext-plain'));
  for (const mechanism of ['scram-sha-256', 'scram-sha-512']) {
    await runCase(`sasl-plaintext-${mechanism}`, () => roundTrip(
      client(saslPlaintext, { sasl: { mechanism, username: 'alice', password: 'alice-secret' } }),
      `sasl-plaintext-${mechanism}`));
  }
  await runCase('sasl-ssl-plain', () => roundTrip(client(saslSsl, { ssl: { ca }, sasl: plain('alice', 'alice-secret') }), 'sasl-ssl-plain'));
  await runCase('sasl-ssl-scram-sha-512', () => roundTrip(
    client(saslSsl, { ssl: { ca }, sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'alice-secret' } }),
    'sasl-ssl-scram-sha-512'));
  const oauthbearer = { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: unsecuredToken('alice') }) };
  await runCase('sasl-oauthbearer', () => roundTrip(client(saslPlaintext, { sasl: oauthbearer }), 'sasl-oauthbearer'));
  await runCase('sasl-ssl-oauthbearer', () => roundTrip(client(saslSsl, { ssl: { ca }, sasl: oauthbearer }), 'sasl-ssl-oauthbearer'));
  await runCase('sasl-ssl-scram-sha-256', () => roundTrip(
    client(saslSsl, { ssl: { ca }, sasl: { mechanism: 'scram-sha-256', username: 'alice', password: 'alice-secret' } }),
    'sasl-ssl-scram-sha-256'));

  await runCase('wrong-password-refused', async () => {
    const a = client(saslPlaintext, { sasl: plain('alice', 'not-her-password'), retry: { retries: 0 } }).admin();
    let error = '';
    try { await a.connect(); await a.listTopics(); } catch (e) { error = e.name || String(e); }
    await a.disconnect();
    // Others are served meanwhile.
    const ok = client(saslPlaintext, { sasl: plain('alice', 'alice-secret') }).admin();
    await ok.connect();
    await ok.listTopics();
    await ok.disconnect();
    report('wrong-password-refused', error === 'KafkaJSSASLAuthenticationError', error);
  });

  await runCase('acls-deny-then-allow', async () => {
    const a = admin.admin();
    await a.connect();
    const topic = unique('acl');
    await a.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const adminOnly = {
      resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:admin', host: '*', operation: AclOperationTypes.ALL, permissionType: AclPermissionTypes.ALLOW,
    };
    await a.createAcls({ acl: [adminOnly] });
    const described = await a.describeAcls({
      resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL,
      operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY,
    });
    const alice = client(saslPlaintext, { sasl: plain('alice', 'alice-secret') });
    const denied = await produceError(alice, topic);
    const asAdmin = await produceError(admin, topic);
    const deleted = await a.deleteAcls({ filters: [adminOnly] });
    const allowed = await produceError(alice, topic);
    await a.disconnect();
    report('acls-deny-then-allow',
      described.resources.length === 1 && denied === 'TOPIC_AUTHORIZATION_FAILED' && asAdmin === ''
        && deleted.filterResponses[0].matchingAcls.length === 1 && allowed === '',
      JSON.stringify({ described: described.resources.length, denied, asAdmin, allowed }));
  });

  await runCase('certificate-principal-meets-acls', async () => {
    const a = admin.admin();
    await a.connect();
    const topic = unique('mapped');
    await a.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    // The client certificate's subject CN=alice,O=compat maps to User:alice (listener rule).
    await a.createAcls({ acl: [AclOperationTypes.WRITE, AclOperationTypes.DESCRIBE].map(operation => ({
      resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:alice', host: '*', operation, permissionType: AclPermissionTypes.ALLOW,
    })) });
    await a.disconnect();
    const withCertificate = await produceError(client(mtls, { ssl: clientCert }), topic);
    const anonymous = await produceError(client(ssl, { ssl: { ca } }), topic);
    report('certificate-principal-meets-acls', withCertificate === '' && anonymous === 'TOPIC_AUTHORIZATION_FAILED',
      JSON.stringify({ withCertificate, anonymous }));
  });
  finish();
})().catch(crashed);
