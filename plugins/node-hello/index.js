'use strict';
// Example forge plugin in Node.js, with no SDK: it loads the contract
// (proto/plugin/v1/plugin.proto) at run time with @grpc/proto-loader and
// serves the six plugin.v1 RPCs with @grpc/grpc-js.
//
//   node index.js [HOST:PORT]      (default $PLUGIN_ADDRESS or 127.0.0.1:50052)
//
// Prints "listening on PORT" once ready; stops gracefully on SIGTERM/SIGINT.

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const PROTOCOL_VERSION = 1;
// gRPC's default 4 MiB limit is too small for proxied HTTP bodies; the
// gateway uses 32 MiB too.
const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

// keepCase: the field names stay as in the .proto (protocol_version, not
// protocolVersion). google/protobuf/struct.proto and timestamp.proto are
// bundled with protobufjs, so only the repository's proto folder is needed.
const definition = protoLoader.loadSync('plugin/v1/plugin.proto', {
  includeDirs: [PROTO_ROOT],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const pluginV1 = grpc.loadPackageDefinition(definition).plugin.v1;

const manifest = {
  name: 'node-hello',
  version: '0.1.0',
  description: 'Says hello to the caller (example plugin in Node.js)',
  subscribed_events: ['release.published'],
  routes: [{ method: 'GET', path: '/hello', description: 'Greets the caller' }],
  required_permissions: [],
  license_tier: '',
};

const state = { config: {}, initialized: false, seenEvents: new Set() };
const MAX_SEEN_EVENTS = 1000;

// HTTP header names ignore case; the gateway sends canonical case anyway.
function header(headers, name) {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers || {})) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}

function jsonResponse(status, data, extraHeaders = {}) {
  return {
    status_code: status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...extraHeaders },
    body: Buffer.from(JSON.stringify(data)),
  };
}

const handlers = {
  Initialize(call) {
    state.config = { ...call.request.config };
    state.initialized = true;
    console.error(`initialized by server ${call.request.server_version || '?'} ` +
      `(protocol ${call.request.protocol_version})`);
    return { success: true, error: '', manifest, protocol_version: PROTOCOL_VERSION };
  },

  // The process keeps serving: a restarting gateway initializes it again.
  Shutdown(call) {
    console.error(`shutdown requested: ${call.request.reason || '(no reason)'}`);
    state.initialized = false;
    return { success: true };
  },

  HealthCheck() {
    return {
      healthy: true,
      status: 'SERVING',
      details: { name: manifest.name, version: manifest.version, initialized: String(state.initialized) },
    };
  },

  GetManifest() {
    return manifest;
  },

  OnEvent(call) {
    const type = call.request.event_type;
    if (!manifest.subscribed_events.includes(type)) {
      return { handled: false, error: `plugin ${manifest.name} is not subscribed to event type '${type}'` };
    }
    // Delivery is at least once: skip an event id already seen.
    const [eventId = ''] = call.metadata.get('x-event-id');
    if (eventId && state.seenEvents.has(String(eventId))) return { handled: true, error: '' };
    if (eventId) {
      state.seenEvents.add(String(eventId));
      if (state.seenEvents.size > MAX_SEEN_EVENTS) {
        state.seenEvents.delete(state.seenEvents.values().next().value);
      }
    }
    console.error(`event ${type} ${eventId} repo=${call.request.repo_id}`);
    return { handled: true, error: '' };
  },

  HandleHTTP(call) {
    const { method, path: routePath, headers } = call.request;
    const route = manifest.routes.find((r) => r.path === routePath);
    if (!route) return jsonResponse(404, { message: 'not found' });
    if (route.method !== String(method).toUpperCase()) {
      return jsonResponse(405, { message: 'method not allowed' }, { Allow: route.method });
    }
    // X-Forge-User-Login is set by the gateway from the verified token and
    // absent for an anonymous caller.
    return jsonResponse(200, { hello: header(headers, 'X-Forge-User-Login') || 'anonymous' });
  },
};

// Every RPC answers in-band: a bug in a handler must not surface as a raw
// gRPC error whose text could reach end users.
function unary(name, fn) {
  return (call, callback) => {
    try {
      callback(null, fn(call));
    } catch (err) {
      console.error(`${name} failed:`, err);
      if (name === 'OnEvent') callback(null, { handled: false, error: 'internal error in the plugin' });
      else if (name === 'HandleHTTP') callback(null, jsonResponse(500, { message: 'internal error in the plugin' }));
      else callback({ code: grpc.status.INTERNAL, details: 'internal error in the plugin' });
    }
  };
}

function main() {
  const address = process.argv[2] || process.env.PLUGIN_ADDRESS || '127.0.0.1:50052';
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  const implementation = {};
  for (const [name, fn] of Object.entries(handlers)) implementation[name] = unary(name, fn);
  server.addService(pluginV1.PluginService.service, implementation);

  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`cannot listen on ${address}: ${err.message}`);
      process.exit(1);
    }
    console.log(`listening on ${port}`);
  });

  const stop = () => {
    // Let in-flight calls finish, but never hang for more than 5 s.
    const force = setTimeout(() => { server.forceShutdown(); process.exit(0); }, 5000);
    force.unref();
    server.tryShutdown(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
