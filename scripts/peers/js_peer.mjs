// A2A peer on @a2a-js/sdk 1.3.x: `agent` and `client`, with the same command line as py_peer.py.
//
// The SDK and its peers (express, @grpc/grpc-js, @bufbuild/protobuf) are loaded from the node
// environment that envs.py builds (A2A_PEER_NODE_ENV, default <repo>/.peers/js-1.3.0), through
// createRequire, because this file lives outside that folder and ESM resolution only looks up
// from the importing file. The agent mirrors the project's demo agent: JSON-RPC at /a2a/jsonrpc,
// HTTP+JSON at /a2a/rest, gRPC (v1.0 and v0.3 services on one server), legacyCompat everywhere,
// the SDK's legacy-aware push sender and an extended card.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import crypto from 'node:crypto';
import net from 'node:net';
import fs from 'node:fs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ENV_DIR = process.env.A2A_PEER_NODE_ENV || path.resolve(HERE, '../../.peers/js-1.3.0');
const require = createRequire(path.join(ENV_DIR, 'package.json'));

const sdk = require('@a2a-js/sdk');
const server = require('@a2a-js/sdk/server');
const expressSdk = require('@a2a-js/sdk/server/express');
const grpcSdk = require('@a2a-js/sdk/server/grpc');
const compat = require('@a2a-js/sdk/compat/v0_3');
const compatServer = require('@a2a-js/sdk/compat/v0_3/server');
const compatGrpc = require('@a2a-js/sdk/compat/v0_3/server/grpc');
const clientSdk = require('@a2a-js/sdk/client');
const clientGrpc = require('@a2a-js/sdk/client/grpc');
const express = require('express');
const grpc = require('@grpc/grpc-js');

const SDK = 'a2a-js';
const SDK_VERSION = JSON.parse(fs.readFileSync(
  path.join(ENV_DIR, 'node_modules/@a2a-js/sdk/package.json'), 'utf8')).version;
const HOST = '127.0.0.1';
const CARD_PATH = '/.well-known/agent-card.json';
const JSONRPC_PATH = '/a2a/jsonrpc';
const REST_PATH = '/a2a/rest';
const BINDINGS = ['JSONRPC', 'HTTP+JSON', 'GRPC'];
const SCENARIOS = ['01-agent-card', '03-blocking-task', '04-polling', '05-streaming', '06-subscribe',
  '07-cancel', '08-push-configs', '09-list-tasks', '10-extended-card', '11-errors', '12-tenant',
  '16-rest-binding'];
const TERMINAL = new Set(['completed', 'canceled', 'failed', 'rejected']);
const NO_WEBHOOK_URL = 'http://127.0.0.1:9/no-webhook';
const COMMANDS = {
  echo: "echo X: task completes with the artifact 'echo X'",
  slow: 'slow N: N artifact updates spaced by --delay, then completed',
  wait: 'wait: stays working until canceled',
  message: "message X: replies with a Message 'X', no task",
};
const { TaskState, Role, AgentEvent } = { ...sdk, ...server };

// --- command line ---------------------------------------------------------------------------

function parseArgs(argv) {
  const role = argv[0];
  const opts = {};
  for (let i = 1; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) usage(`bad argument ${argv[i]}`);
    opts[argv[i].slice(2)] = argv[i + 1];
  }
  if (role === 'agent') {
    return { role, port: Number(opts.port ?? 0), grpcPort: Number(opts['grpc-port'] ?? 0),
      delay: Number(opts.delay ?? 0.05) };
  }
  if (role === 'client') {
    for (const k of ['card-url', 'binding', 'scenario']) if (!opts[k]) usage(`--${k} is required`);
    if (!BINDINGS.includes(opts.binding)) usage(`--binding must be one of ${BINDINGS}`);
    if (!SCENARIOS.includes(opts.scenario)) usage(`--scenario must be one of ${SCENARIOS}`);
    return { role, cardUrl: opts['card-url'], binding: opts.binding, scenario: opts.scenario,
      webhookUrl: opts['webhook-url'] ?? null, tenant: opts.tenant ?? null,
      timeout: Number(opts.timeout ?? 30) };
  }
  usage('first argument must be agent or client');
}

function usage(why) {
  process.stderr.write(`js_peer.mjs: ${why}\nusage: js_peer.mjs agent --port P [--grpc-port G] [--delay S]\n` +
    '       js_peer.mjs client --card-url URL --binding B --scenario S [--webhook-url U] [--tenant T]\n');
  process.exit(2);
}

// --- agent ----------------------------------------------------------------------------------

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const textPart = (text) => ({ content: { $case: 'text', value: text }, mediaType: 'text/plain',
  filename: '', metadata: {} });
const now = () => new Date().toISOString();

class PeerExecutor {
  constructor(delay) { this.delay = delay; this.waiting = new Map(); }

  async execute(ctx, bus) {
    const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    const [verbRaw, ...rest] = text.trim().split(' ');
    const verb = verbRaw.toLowerCase();
    const arg = rest.join(' ').trim();
    const { taskId, contextId } = ctx;
    if (verb === 'message' || !(verb in COMMANDS)) {
      bus.publish(AgentEvent.message({ messageId: crypto.randomUUID(), contextId, taskId: '',
        role: Role.ROLE_AGENT, parts: [textPart(verb === 'message' ? arg : `unknown command '${verb}'`)],
        metadata: {}, extensions: [], referenceTaskIds: [] }));
      return;
    }
    const status = (state) => ({ state, message: undefined, timestamp: now() });
    const update = (state) => bus.publish(AgentEvent.statusUpdate({ taskId, contextId,
      status: status(state), metadata: {} }));
    const artifact = (name, value) => bus.publish(AgentEvent.artifactUpdate({ taskId, contextId,
      artifact: { artifactId: crypto.randomUUID(), name, description: '', parts: [textPart(value)],
        metadata: {}, extensions: [] }, append: false, lastChunk: false, metadata: {} }));
    if (!ctx.task) {
      const first = verb === 'wait' ? TaskState.TASK_STATE_WORKING : TaskState.TASK_STATE_SUBMITTED;
      bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(first), artifacts: [],
        history: [ctx.userMessage], metadata: {} }));
    }
    if (verb === 'wait') {
      await new Promise((resolve) => this.waiting.set(taskId, resolve)); // until cancelTask
      return;
    }
    update(TaskState.TASK_STATE_WORKING);
    if (verb === 'echo') {
      artifact('echo', `echo ${arg}`.trimEnd());
    } else {
      const n = /^\d+$/.test(arg) ? Number(arg) : 3;
      for (let i = 1; i <= n; i += 1) {
        await sleep(this.delay * 1000);
        artifact(`chunk-${i}`, `chunk ${i}`);
      }
    }
    update(TaskState.TASK_STATE_COMPLETED);
  }

  async cancelTask(taskId, bus) {
    const task = { taskId, contextId: '', metadata: {},
      status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() } };
    const resolve = this.waiting.get(taskId);
    this.waiting.delete(taskId);
    bus.publish(AgentEvent.statusUpdate(task));
    if (resolve) resolve();
  }
}

function freePort(port) {
  // Bind port 0 (or the asked port) to learn a free port before building the card.
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(port, HOST, () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

function urls(httpPort, grpcPort) {
  const base = `http://${HOST}:${httpPort}`;
  return { base_url: base, card_url: base + CARD_PATH, jsonrpc_url: base + JSONRPC_PATH,
    rest_url: base + REST_PATH, grpc_target: grpcPort === null ? null : `${HOST}:${grpcPort}` };
}

function buildCard(u) {
  const byBinding = { JSONRPC: u.jsonrpc_url, 'HTTP+JSON': u.rest_url, GRPC: u.grpc_target };
  const v1 = Object.entries(byBinding).filter(([, url]) => url)
    .map(([protocolBinding, url]) => ({ url, protocolBinding, tenant: '', protocolVersion: '1.0' }));
  const skill = (id, description) => ({ id, name: id, description, tags: ['peer'], examples: [],
    inputModes: [], outputModes: [], securityRequirements: [] });
  return {
    name: `${SDK} ${SDK_VERSION} peer agent`, description: 'A2A peer agent for a2a-recorder',
    supportedInterfaces: compat.duplicateInterfacesForLegacy(v1, v1.map((i) => i.protocolBinding)),
    provider: undefined, version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true },
    securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'], signatures: [],
    skills: Object.entries(COMMANDS).map(([id, d]) => skill(id, d)),
  };
}

async function serve({ port, grpcPort, delay }) {
  const httpPort = await freePort(port);
  const realGrpc = grpcPort >= 0 ? await freePort(grpcPort) : null;
  const u = urls(httpPort, realGrpc);
  const card = buildCard(u);
  const extended = { ...card, description: `${card.description} (extended card)`,
    skills: [...card.skills, { ...card.skills[0], id: 'extended', name: 'extended',
      description: 'extended only' }] };
  const store = new server.InMemoryPushNotificationStore();
  const handler = new server.DefaultRequestHandler(card, new server.InMemoryTaskStore(),
    new PeerExecutor(delay), undefined, store,
    // A static extended card goes only to authenticated users (the public card otherwise);
    // a provider function serves it to everyone, like the Python peers do.
    compatServer.createLegacyAwarePushNotificationSender(store), async () => extended);
  const opts = { requestHandler: handler, userBuilder: expressSdk.UserBuilder.noAuthentication,
    legacyCompat: { enabled: true } };
  const app = express();
  app.use(CARD_PATH, expressSdk.agentCardHandler({ agentCardProvider: handler,
    legacyCompat: { enabled: true } }));
  app.use(JSONRPC_PATH, expressSdk.jsonRpcHandler(opts));
  app.use(REST_PATH, expressSdk.restHandler(opts));
  const httpServer = await new Promise((resolve, reject) => {
    const s = app.listen(httpPort, HOST, () => resolve(s));
    s.once('error', reject);
  });
  let gs = null;
  if (realGrpc !== null) {
    gs = new grpc.Server();
    const gopts = { requestHandler: handler, userBuilder: grpcSdk.UserBuilder.noAuthentication };
    gs.addService(grpcSdk.A2AService, grpcSdk.grpcService(gopts));
    gs.addService(compatGrpc.LegacyA2AService, compatGrpc.legacyGrpcService(gopts));
    await new Promise((resolve, reject) => gs.bindAsync(`${HOST}:${realGrpc}`,
      grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  }
  process.stdout.write(`READY ${JSON.stringify({ ...u, sdk: SDK, sdk_version: SDK_VERSION })}\n`);
  const stop = () => {
    httpServer.closeAllConnections?.();
    httpServer.close();
    if (gs) gs.forceShutdown();
    setTimeout(() => process.exit(0), 200).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// --- client ---------------------------------------------------------------------------------

class ScenarioFailed extends Error {}
class Skip extends Error {}
const expect = (cond, why) => { if (!cond) throw new ScenarioFailed(why); };
const stateName = (s) => String(TaskState[s] ?? s).replace('TASK_STATE_', '').toLowerCase().replace(/_/g, '-');
const texts = (parts) => (parts || []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value);
const errorName = (e) => e?.constructor?.name || String(e);

function eventName(ev) {
  const p = ev.payload;
  if (!p) return 'empty:';
  switch (p.$case) {
    case 'task': return `task:${stateName(p.value.status?.state)}`;
    case 'statusUpdate': return `status:${stateName(p.value.status?.state)}`;
    case 'artifactUpdate': return `artifact:${texts(p.value.artifact?.parts).join('')}`;
    case 'message': return `message:${texts(p.value.parts).join('')}`;
    default: return `${p.$case}:`;
  }
}
const terminalOf = (names) => {
  const states = names.filter((n) => n.startsWith('task:') || n.startsWith('status:')).map((n) => n.split(':')[1]);
  return states.length ? states[states.length - 1] : '';
};

class Summary {
  constructor(args) {
    this.sdk = SDK; this.sdk_version = SDK_VERSION; this.scenario = args.scenario;
    this.binding = args.binding; this.steps = []; this.facts = {};
  }
  step(call, fields = {}) { const s = { call, ...fields }; this.steps.push(s); return s; }
  toJSON(ok, failure) {
    const states = []; const txt = [];
    for (const s of this.steps) {
      for (const ev of s.events || []) {
        const [kind, ...rest] = ev.split(':');
        (kind === 'artifact' || kind === 'message' ? txt : states).push(rest.join(':'));
      }
      if (s.state) states.push(s.state);
      txt.push(...(s.texts || []));
    }
    const out = { sdk: this.sdk, sdk_version: this.sdk_version, scenario: this.scenario,
      binding: this.binding, ok, steps: this.steps, states: states.filter(Boolean), texts: txt,
      errors: this.steps.filter((s) => s.error).map((s) => s.error), ...this.facts };
    if (failure) out.failure = failure;
    return out;
  }
}

const TRANSPORTS = {
  JSONRPC: () => new clientSdk.JsonRpcTransportFactory(),
  'HTTP+JSON': () => new clientSdk.RestTransportFactory(),
  GRPC: () => new clientGrpc.GrpcTransportFactory(),
};

class JsClient {
  constructor(args, summary) {
    this.args = args; this.summary = summary; this.contextId = crypto.randomUUID();
    this.tenant = args.tenant || '';
  }
  splitCardUrl() {
    const url = this.args.cardUrl;
    return url.endsWith(CARD_PATH) ? [url.slice(0, -CARD_PATH.length), CARD_PATH] : [url, undefined];
  }
  async client(binding) {
    const b = binding || this.args.binding;
    const factory = new clientSdk.ClientFactory(clientSdk.ClientFactoryOptions.createFrom(
      clientSdk.ClientFactoryOptions.default, { transports: [TRANSPORTS[b]()], preferredTransports: [b] }));
    return factory.createFromUrl(...this.splitCardUrl());
  }
  message(text) {
    return { messageId: crypto.randomUUID(), contextId: this.contextId, taskId: '',
      role: Role.ROLE_USER, parts: [textPart(text)], metadata: {}, extensions: [], referenceTaskIds: [] };
  }
  request(text, configuration) {
    return { tenant: this.tenant, message: this.message(text), metadata: {},
      configuration: configuration ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined,
        returnImmediately: false, ...configuration } : undefined };
  }
  async send(c, req, call) {
    const result = await c.sendMessage(req);
    const isTask = result && result.status !== undefined && result.id !== undefined;
    const names = [isTask ? `task:${stateName(result.status?.state)}` : `message:${texts(result.parts).join('')}`];
    this.summary.step(call, { events: names, state: terminalOf(names) || undefined });
    return isTask ? result : null;
  }
}

const S = {
  async '01-agent-card'(p) {
    const resolver = clientSdk.ClientFactoryOptions.default.cardResolver
      ?? new clientSdk.DefaultAgentCardResolver();
    const card = await resolver.resolve(...p.splitCardUrl());
    p.summary.step('GetAgentCard', { name: card.name,
      interfaces: card.supportedInterfaces.map((i) => `${i.protocolBinding}@${i.protocolVersion} ${i.url}`).sort(),
      capabilities: { streaming: card.capabilities?.streaming, push: card.capabilities?.pushNotifications,
        extended: card.capabilities?.extendedAgentCard },
      skills: card.skills.map((s) => s.id) });
    expect(card.supportedInterfaces.length > 0, 'card lists no interfaces');
  },
  async '03-blocking-task'(p, binding) {
    const c = await p.client(binding);
    const task = await p.send(c, p.request('echo hello'), 'SendMessage');
    expect(task, 'no task returned');
    const t = task.artifacts.flatMap((a) => texts(a.parts));
    p.summary.steps[p.summary.steps.length - 1].texts = t;
    expect(stateName(task.status.state) === 'completed', `state ${stateName(task.status.state)}`);
    expect(t.includes('echo hello'), "no 'echo hello' artifact");
  },
  async '04-polling'(p) {
    const c = await p.client();
    const task = await p.send(c, p.request('slow 3', { returnImmediately: true }), 'SendMessage');
    expect(task, 'no task returned');
    const seen = [];
    let got;
    for (;;) {
      got = await c.getTask({ tenant: p.tenant, id: task.id });
      const st = stateName(got.status.state);
      if (seen[seen.length - 1] !== st) seen.push(st);
      if (TERMINAL.has(st)) break;
      await sleep(20);
    }
    p.summary.step('GetTask*', { events: seen.map((s) => `task:${s}`), state: seen[seen.length - 1],
      texts: got.artifacts.flatMap((a) => texts(a.parts)) });
    expect(seen[seen.length - 1] === 'completed', `ended ${seen[seen.length - 1]}`);
  },
  async '05-streaming'(p) {
    const c = await p.client();
    const names = [];
    for await (const ev of c.sendMessageStream(p.request('slow 3'))) names.push(eventName(ev));
    p.summary.step('SendStreamingMessage', { events: names, state: terminalOf(names) || undefined });
    expect(terminalOf(names) === 'completed', `stream ended ${terminalOf(names)}`);
  },
  async '06-subscribe'(p) {
    const c = await p.client();
    const task = await p.send(c, p.request('wait', { returnImmediately: true }), 'SendMessage');
    expect(task, "no task returned for 'wait'");
    const names = [];
    let gotFirst;
    const first = new Promise((r) => { gotFirst = r; });
    const consumer = (async () => {
      for await (const ev of c.resubscribeTask({ tenant: p.tenant, id: task.id })) {
        names.push(eventName(ev)); gotFirst();
      }
    })();
    consumer.catch(() => {});
    await Promise.race([first, consumer, sleep(1000)]);
    p.summary.facts.event_before_cancel = names.length > 0;
    const canceled = await c.cancelTask({ tenant: p.tenant, id: task.id, metadata: {} });
    p.summary.step('CancelTask', { state: stateName(canceled.status.state) });
    await consumer;
    p.summary.step('SubscribeToTask', { events: names });
    expect(terminalOf(names) === 'canceled', `subscription ended ${terminalOf(names)}`);
  },
  async '07-cancel'(p) {
    const c = await p.client();
    const task = await p.send(c, p.request('wait', { returnImmediately: true }), 'SendMessage');
    expect(task, "no task returned for 'wait'");
    const canceled = await c.cancelTask({ tenant: p.tenant, id: task.id, metadata: {} });
    p.summary.step('CancelTask', { state: stateName(canceled.status.state) });
    expect(stateName(canceled.status.state) === 'canceled', `state ${stateName(canceled.status.state)}`);
  },
  async '08-push-configs'(p) {
    const c = await p.client();
    const task = await p.send(c, p.request('echo hello'), 'SendMessage');
    const cfg = (taskId, id) => ({ tenant: p.tenant, id, taskId, url: p.args.webhookUrl || NO_WEBHOOK_URL,
      token: 'peer-token-1', authentication: { scheme: 'Bearer', credentials: 'peer-credentials-1' } });
    const fields = (x) => ({ url: x.url, token: x.token, scheme: x.authentication?.scheme });
    const cid = `cfg-${crypto.randomUUID().slice(0, 8)}`;
    const created = await c.createTaskPushNotificationConfig(cfg(task.id, cid));
    p.summary.step('CreateTaskPushNotificationConfig', { config: fields(created), same_id: created.id === cid });
    const got = await c.getTaskPushNotificationConfig({ tenant: p.tenant, taskId: task.id, id: created.id });
    p.summary.step('GetTaskPushNotificationConfig', { config: fields(got) });
    const listed = await c.listTaskPushNotificationConfig({ tenant: p.tenant, taskId: task.id, pageSize: 0, pageToken: '' });
    p.summary.step('ListTaskPushNotificationConfigs', { count: listed.configs.length });
    await c.deleteTaskPushNotificationConfig({ tenant: p.tenant, taskId: task.id, id: created.id });
    p.summary.step('DeleteTaskPushNotificationConfig');
    const after = await c.listTaskPushNotificationConfig({ tenant: p.tenant, taskId: task.id, pageSize: 0, pageToken: '' });
    p.summary.step('ListTaskPushNotificationConfigs', { count: after.configs.length });
    expect(listed.configs.length === 1 && after.configs.length === 0, 'config not listed/deleted');
    if (p.args.webhookUrl) {
      const pushed = await p.send(c, p.request('echo push', { taskPushNotificationConfig: cfg('', '') }),
        'SendMessage+push');
      expect(pushed && stateName(pushed.status.state) === 'completed', 'push send failed');
    }
  },
  async '09-list-tasks'(p) {
    const c = await p.client();
    await p.send(c, p.request('echo hello'), 'SendMessage');
    const page = await c.listTasks({ tenant: p.tenant, contextId: p.contextId, status: 0,
      pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true });
    p.summary.step('ListTasks', { states: page.tasks.map((t) => stateName(t.status.state)),
      total: page.totalSize, count: page.tasks.length });
    expect(page.tasks.length === 1, `listed ${page.tasks.length} tasks`);
  },
  async '10-extended-card'(p) {
    const c = await p.client();
    const card = await c.getAgentCard();
    p.summary.step('GetExtendedAgentCard', { description: card.description, skills: card.skills.map((s) => s.id) });
    expect(card.description.includes('extended'), 'not the extended card');
  },
  async '11-errors'(p) {
    const c = await p.client();
    await expectError(p, 'GetTask(unknown)', 'TaskNotFound', () => c.getTask({ tenant: p.tenant, id: crypto.randomUUID() }));
    const task = await p.send(c, p.request('echo hello'), 'SendMessage');
    await expectError(p, 'CancelTask(completed)', 'TaskNotCancelable',
      () => c.cancelTask({ tenant: p.tenant, id: task.id, metadata: {} }));
  },
  async '12-tenant'(p) {
    p.tenant = p.args.tenant || 'tenant-a';
    p.summary.facts.tenant = p.tenant;
    await S['03-blocking-task'](p);
  },
  async '16-rest-binding'(p) {
    p.summary.binding = 'HTTP+JSON';
    await S['03-blocking-task'](p, 'HTTP+JSON');
  },
};

async function expectError(p, call, wanted, action) {
  try {
    await action();
  } catch (e) {
    const name = errorName(e);
    p.summary.step(call, { error: name, message: String(e?.message ?? e).slice(0, 200) });
    expect(name.includes(wanted), `${call}: wanted ${wanted}, got ${name}`);
    return;
  }
  p.summary.step(call);
  throw new ScenarioFailed(`${call}: no error raised, wanted ${wanted}`);
}

async function clientMain(args) {
  const summary = new Summary(args);
  const p = new JsClient(args, summary);
  const timer = setTimeout(() => {
    process.stdout.write(`${JSON.stringify(summary.toJSON(false, `TimeoutError: scenario took over ${args.timeout}s`))}\n`);
    process.exit(1);
  }, args.timeout * 1000);
  let code = 0;
  try {
    await S[args.scenario](p);
    process.stdout.write(`${JSON.stringify(summary.toJSON(true))}\n`);
  } catch (e) {
    if (e instanceof Skip) {
      process.stdout.write(`${JSON.stringify({ skipped: e.message, sdk: SDK, sdk_version: SDK_VERSION,
        scenario: args.scenario, binding: args.binding })}\n`);
    } else {
      if (!(e instanceof ScenarioFailed)) process.stderr.write(`${e?.stack ?? e}\n`);
      const why = e instanceof ScenarioFailed ? e.message : `${errorName(e)}: ${e?.message ?? e}`;
      process.stdout.write(`${JSON.stringify(summary.toJSON(false, why.slice(0, 500)))}\n`);
      code = 1;
    }
  }
  clearTimeout(timer);
  process.exit(code); // gRPC channels keep the loop alive otherwise
}

const args = parseArgs(process.argv.slice(2));
if (args.role === 'agent') await serve(args);
else await clientMain(args);
