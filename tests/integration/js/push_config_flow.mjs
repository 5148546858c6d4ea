// The @a2a-js/sdk 1.3.0 client's push-config flow, under a config id it chooses itself.
//
// usage: node push_config_flow.mjs CARD_URL BINDING   (the SDK comes from the node environment
// scripts/peers/envs.py builds: A2A_PEER_NODE_ENV).  Send a task, create a push config for it
// under the id `cfg-1` (the same on every run, as a client with a fixed config name has),
// read it back, list, delete, list again.  Prints one JSON line of outcomes with the ids left
// out, so two runs (live, replayed) compare with `==`; an error is an outcome too.
import { createRequire } from 'node:module';
import path from 'node:path';
import crypto from 'node:crypto';

const require = createRequire(path.join(process.env.A2A_PEER_NODE_ENV, 'package.json'));
const clientSdk = require('@a2a-js/sdk/client');
const clientGrpc = require('@a2a-js/sdk/client/grpc');
const { Role, TaskState } = require('@a2a-js/sdk');

const CARD_PATH = '/.well-known/agent-card.json';
const CONFIG_ID = 'cfg-1';
const TRANSPORTS = {
  JSONRPC: () => new clientSdk.JsonRpcTransportFactory(),
  'HTTP+JSON': () => new clientSdk.RestTransportFactory(),
  GRPC: () => new clientGrpc.GrpcTransportFactory(),
};
const [cardUrl, binding] = process.argv.slice(2);

const request = (text) => ({
  tenant: '', metadata: {}, configuration: undefined,
  message: { messageId: crypto.randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '',
      metadata: {} }], metadata: {}, extensions: [], referenceTaskIds: [] },
});

const factory = new clientSdk.ClientFactory(clientSdk.ClientFactoryOptions.createFrom(
  clientSdk.ClientFactoryOptions.default,
  { transports: [TRANSPORTS[binding]()], preferredTransports: [binding] }));
const client = await factory.createFromUrl(cardUrl.slice(0, -CARD_PATH.length), CARD_PATH);

const outcomes = [];
async function step(name, call) {
  try {
    outcomes.push([name, await call()]);
  } catch (e) {
    outcomes.push([name, `error:${e?.constructor?.name}`]);
  }
}

const task = await client.sendMessage(request('echo hello'));
outcomes.push(['send', String(TaskState[task.status.state] ?? task.status.state)]);
const config = { tenant: '', taskId: task.id, id: CONFIG_ID, url: 'http://127.0.0.1:9/hook',
  token: 'token-1', authentication: { scheme: 'Bearer', credentials: 'secret-1' } };
const same = (c) => `${c.id === CONFIG_ID} ${c.taskId === task.id} ${c.url}`;
await step('create', async () => same(await client.createTaskPushNotificationConfig(config)));
await step('get', async () => same(await client.getTaskPushNotificationConfig(
  { tenant: '', taskId: task.id, id: CONFIG_ID })));
const list = async () => (await client.listTaskPushNotificationConfig(
  { tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.map(same);
await step('list', list);
await step('delete', async () => {
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: CONFIG_ID });
  return 'deleted';
});
await step('list-after-delete', list);
console.log(JSON.stringify(outcomes));
process.exit(0); // gRPC channels keep the loop alive otherwise
