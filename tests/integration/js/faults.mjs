// The @a2a-js/sdk 1.3.0 client against faulted replays: what it gets, and what it throws.
//
// usage: node faults.mjs BINDING JOBS   (JOBS: JSON [{"card": URL, "action": A, "timeout": S},
// ...], timeout optional; the SDK comes from A2A_PEER_NODE_ENV, the node environment
// scripts/peers/envs.py builds)
//
// Actions, each with a new client from the card:
//   stream   sendMessageStream('slow 3'): the events (and when each came), then how it ended
//   resume   the same; when the stream breaks, resubscribeTask to the task it named
//   send     sendMessage('echo hello'); when it throws, the same request once more
// A job's timeout (seconds) gives each call an AbortSignal.timeout, the SDK's way to give up.
// Requests are built as scripts/peers/js_peer.mjs builds them (so they match the corpus's
// a2a-js captures).  Events are printed as the SDK's own StreamResponse.toJSON gives them,
// errors as "Name: message".  Prints one JSON list, a result per job.
import { createRequire } from 'node:module';
import path from 'node:path';
import crypto from 'node:crypto';

const require = createRequire(path.join(process.env.A2A_PEER_NODE_ENV, 'package.json'));
const sdk = require('@a2a-js/sdk');
const clientSdk = require('@a2a-js/sdk/client');
const clientGrpc = require('@a2a-js/sdk/client/grpc');

const CARD_PATH = '/.well-known/agent-card.json';
const TRANSPORTS = {
  JSONRPC: () => new clientSdk.JsonRpcTransportFactory(),
  'HTTP+JSON': () => new clientSdk.RestTransportFactory(),
  GRPC: () => new clientGrpc.GrpcTransportFactory(),
};
const [binding, jobsText] = process.argv.slice(2);

const textPart = (text) => ({ content: { $case: 'text', value: text }, mediaType: 'text/plain',
  filename: '', metadata: {} });
const request = (text) => ({
  tenant: '', metadata: {}, configuration: undefined,
  message: { messageId: crypto.randomUUID(), contextId: crypto.randomUUID(), taskId: '',
    role: sdk.Role.ROLE_USER, parts: [textPart(text)], metadata: {}, extensions: [],
    referenceTaskIds: [] },
});
const said = (error) => `${error?.constructor?.name ?? 'Error'}: ${error?.message ?? error}`;
const json = (event) => sdk.StreamResponse.toJSON(event);
const taskOf = (event) => {
  const p = event.payload;
  return p?.$case === 'task' ? p.value.id : p?.value?.taskId;
};

async function client(card) {
  const factory = new clientSdk.ClientFactory(clientSdk.ClientFactoryOptions.createFrom(
    clientSdk.ClientFactoryOptions.default,
    { transports: [TRANSPORTS[binding]()], preferredTransports: [binding] }));
  return factory.createFromUrl(card.slice(0, -CARD_PATH.length), CARD_PATH);
}

async function collect(iterable) {
  const events = [];
  const times = [];  // ms from the call to each event
  const start = performance.now();
  let error = null;
  try {
    for await (const event of iterable) {
      events.push(event);
      times.push(performance.now() - start);
    }
  } catch (e) {
    error = said(e);
  }
  return { events, error, times };
}

const ACTIONS = {
  async stream(c) {
    const { events, error, times } = await collect(c.sendMessageStream(request('slow 3')));
    return { events: events.map(json), error, times };
  },
  async resume(c) {
    const { events, error } = await collect(c.sendMessageStream(request('slow 3')));
    const out = { events: events.map(json), error, resumed: null, resumeError: null };
    const task = events.map(taskOf).find(Boolean);
    if (error && task) {
      const again = await collect(c.resubscribeTask({ tenant: '', id: task }));
      out.resumed = again.events.map(json);
      out.resumeError = again.error;
    }
    return out;
  },
  async send(c, options) {
    const req = request('echo hello');
    const out = { result: null, error: null, retry: null, retryError: null, times: [] };
    const start = performance.now();
    try {
      out.result = sdk.Task.toJSON(await c.sendMessage(req, options()));
      out.times.push(performance.now() - start);
      return out;
    } catch (e) {
      out.error = said(e);
    }
    try {
      out.retry = sdk.Task.toJSON(await c.sendMessage(req, options()));
    } catch (e) {
      out.retryError = said(e);
    }
    return out;
  },
};

const results = [];
for (const job of JSON.parse(jobsText)) {
  try {
    const options = () => (job.timeout ? { signal: AbortSignal.timeout(job.timeout * 1000) }
      : undefined);
    results.push(await ACTIONS[job.action](await client(job.card), options));
  } catch (e) {
    results.push({ failed: said(e) });
  }
}
console.log(JSON.stringify(results));
