// The @a2a-js/sdk 1.3.0 client: send, stream, get, then ListTasks with no filter.
//
// usage: node send_stream_get_list.mjs CARD_URL BINDING   (the SDK comes from the node
// environment scripts/peers/envs.py builds: A2A_PEER_NODE_ENV).  Its messages carry no
// contextId, so the agent picks one per task, and its fetch pool puts the stream on a
// connection of its own.  Prints {"sent": [task ids], "listed": [task ids]}.
import { createRequire } from 'node:module';
import path from 'node:path';
import crypto from 'node:crypto';

const require = createRequire(path.join(process.env.A2A_PEER_NODE_ENV, 'package.json'));
const clientSdk = require('@a2a-js/sdk/client');
const clientGrpc = require('@a2a-js/sdk/client/grpc');
const { Role } = require('@a2a-js/sdk');

const CARD_PATH = '/.well-known/agent-card.json';
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
const sent = [];
const task = await client.sendMessage(request('echo one'));
sent.push(task.id);
for await (const event of client.sendMessageStream(request('slow 2'))) {
  const p = event.payload;
  const id = p?.$case === 'task' ? p.value.id : p?.value?.taskId;
  if (id && !sent.includes(id)) sent.push(id);
}
const got = await client.getTask({ tenant: '', id: task.id });
if (got.id !== task.id) throw new Error(`GetTask answered ${got.id}, not ${task.id}`);
const page = await client.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '',
  statusTimestampAfter: undefined, includeArtifacts: false });
console.log(JSON.stringify({ sent, listed: page.tasks.map((t) => t.id) }));
