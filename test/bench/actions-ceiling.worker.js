// The Actions ceiling's client: plain Node in a thread of its own (as each Actions call runs on a
// worker of the Actions lane), sending the very requests an Actions destination sent (method, path,
// headers, body) over TLS to the same loopback fake, trusting its CA and naming the vendor's host (SNI),
// `concurrency` at a time over keep-alive connections, with none of the destination's code around them.
// It sends them as the destination's requests go: undici's `dispatch`, read whole.
'use strict';
const { Agent, buildConnector } = require('undici');
const { parentPort, workerData } = require('node:worker_threads');
const { statusOf } = require('./undici-status');

const { port, ca, requests, concurrency } = workerData;
/** Set by the client per request, not part of what the destination chose to send. */
const CONNECTION_HEADERS = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive']);
const connect = buildConnector({ ca });
// Every name's connection goes to the fake on 127.0.0.1; the TLS name (SNI) stays the vendor's.
const agent = new Agent({
  connect: (options, callback) =>
    connect({ ...options, hostname: '127.0.0.1', servername: options.hostname, port }, callback),
});

function send(recorded) {
  const body = Buffer.from(recorded.body, 'utf8');
  const headers = {};
  for (const [name, value] of Object.entries(recorded.headers))
    if (!CONNECTION_HEADERS.has(name)) headers[name] = value;
  headers['content-length'] = String(body.length);
  return statusOf(agent, {
    origin: `https://${recorded.host}`,
    method: recorded.method,
    path: recorded.path,
    headers,
    body,
  }).then((status) => {
    if (status < 200 || status >= 300) throw new Error(`HTTP ${status}`);
  });
}

async function sendAll(list) {
  let next = 0;
  const worker = async () => {
    while (next < list.length) await send(list[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, worker));
}

async function run() {
  // Untimed: opens the connections (TLS handshakes) and warms the code, as the destination's
  // connections and code are warm by the time its run is timed (after a round's worth of messages). A
  // fresh thread's client needs about as many: after 64 requests, rounds of 2,000 read 5,000 messages/s
  // in a full run where warm ones read 8,500-12,600.
  const warmUp = requests;
  await sendAll(warmUp);
  // The bench measures this process's CPU from here on.
  parentPort.postMessage({ timing: true });
  const startedAt = process.hrtime.bigint();
  await sendAll(requests);
  const elapsedMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
  await agent.close();
  parentPort.postMessage({ requests: requests.length, warmUpRequests: warmUp.length, elapsedMs });
}

run().catch((error) =>
  parentPort.postMessage({ error: String(error && error.message ? error.message : error) }),
);
