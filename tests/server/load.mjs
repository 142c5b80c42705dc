// Load, abuse and resource checks for `run serve` (tests/sh/test_server_load.sh). Plain Node 20:
// node:http and node:net only. Prints TAP-style "ok - " / "not ok - " lines; exits 1 if any failed.
// Usage:
//   node load.mjs warmup BASE QUESTIONS.jsonl 32 requests at once, every slot used (before an RSS baseline)
//   node load.mjs load BASE QUESTIONS.jsonl   sequential answers, then 32 clients x 8 requests at once
//   node load.mjs malformed BASE TIMEOUT_S     raw-socket abuse: bad JSON/types, 413, 431, truncated
//                                              chunked body, slow headers, pipelining, HTTP/1.0
//   node load.mjs idle BASE N                  N idle connections (server: --max-connections N)
//   node load.mjs cancel BASE                  a client that goes away has its request cancelled
//   node load.mjs queue BASE                   -np 1 --queue 2: 8 long requests, some 429
//   node load.mjs busy BASE N                  --max-connections N, every one waiting: the next gets 503
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';

const [mode, base, arg] = process.argv.slice(2);
const url = new URL(base);
const HOST = url.hostname, PORT = Number(url.port);
let failed = 0;
function check(name, ok, detail) {
  const d = ok || detail === undefined ? '' : ' # ' + JSON.stringify(detail).slice(0, 600);
  console.log((ok ? 'ok - ' : 'not ok - ') + name + d);
  if (!ok) failed++;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One HTTP request: {status, headers, text}; rejects on a socket error.
function request(method, path, body, { agent = false, timeout = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const rq = http.request({ host: HOST, port: PORT, method, path, agent,
      headers: data === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    rq.setTimeout(timeout, () => rq.destroy(new Error('timeout')));
    rq.on('error', reject);
    if (data !== undefined) rq.write(data);
    rq.end();
  });
}
const post = (path, body, opt) => request('POST', path, body, opt);

async function metrics() {
  const r = await request('GET', '/metrics');
  const m = {};
  for (const l of r.text.split('\n')) {
    const x = /^(tessera_\w+) ([0-9.eE+-]+)$/.exec(l);
    if (x) m[x[1]] = Number(x[2]);
  }
  return m;
}

// The text of a completion response, streamed (SSE events) or not; throws on a malformed answer.
function answerText(api, stream, r) {
  if (r.status !== 200) throw new Error(`status ${r.status}: ${r.text.slice(0, 200)}`);
  if (!stream) {
    const o = JSON.parse(r.text);
    return api === 'chat' ? o.choices[0].message.content : o.choices[0].text;
  }
  if (!r.text.endsWith('\n\n')) throw new Error('the stream does not end with a blank line');
  const events = r.text.slice(0, -2).split('\n\n');
  if (events[events.length - 1] !== 'data: [DONE]') throw new Error('no [DONE] at the end');
  let text = '', finishes = 0;
  for (const e of events.slice(0, -1)) {
    if (!e.startsWith('data: ')) throw new Error('not a data event: ' + e.slice(0, 80));
    const o = JSON.parse(e.slice(6));
    if (o.error) throw new Error('error event: ' + e.slice(0, 200));
    for (const c of o.choices) {
      text += api === 'chat' ? (c.delta.content ?? '') : (c.text ?? '');
      if (c.finish_reason) finishes++;
    }
  }
  if (finishes !== 1) throw new Error(`${finishes} finish reasons`);
  return text;
}

// ---- load ----
function loadPrompts(questionsPath) {
  const qs = readFileSync(questionsPath, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).slice(0, 16);
  const prompts = qs.map((q) => ({ api: 'chat', path: '/v1/chat/completions',
    body: { messages: [{ role: 'system', content: q.system }, { role: 'user', content: q.user }], temperature: 0, max_tokens: 24 } }));
  for (const p of ['Once upon a time', 'The capital of France is', 'Facts: Rowan is a newspaper.', '1, 2, 3,'])
    prompts.push({ api: 'completions', path: '/v1/completions', body: { prompt: p, temperature: 0, max_tokens: 24 } });
  return { qs, prompts };
}
async function modeWarmup(questionsPath) {
  const { prompts } = loadPrompts(questionsPath);
  const rs = await Promise.all(Array.from({ length: 32 }, (_, i) => {
    const p = prompts[i % prompts.length];
    return post(p.path, i % 2 ? { ...p.body, stream: true } : p.body).catch((e) => ({ status: String(e) }));
  }));
  check('warm-up: 32 requests at once, all 200', rs.every((r) => r.status === 200), rs.map((r) => r.status));
}
async function modeLoad(questionsPath) {
  const { qs, prompts } = loadPrompts(questionsPath);
  const distinct = new Set(prompts.map((p) => JSON.stringify(p.body))).size;
  check(`${prompts.length} distinct prompts (${qs.length} chat questions, 4 raw completions)`, distinct === prompts.length && qs.length >= 8);

  // the sequential answers, one request at a time (non-streaming), then each again as a stream
  const t0 = Date.now();
  const answers = [];
  let seqErr = [];
  for (const p of prompts) {
    try { answers.push(answerText(p.api, false, await post(p.path, p.body))); }
    catch (e) { answers.push(null); seqErr.push(String(e)); }
  }
  check('sequential answers: every prompt answered 200', seqErr.length === 0, seqErr);
  check('sequential answers are not all the same (the prompts matter)', new Set(answers).size > prompts.length / 2, answers);
  let streamDiff = [];
  for (let i = 0; i < prompts.length; i++) {
    try {
      const t = answerText(prompts[i].api, true, await post(prompts[i].path, { ...prompts[i].body, stream: true }));
      if (t !== answers[i]) streamDiff.push([i, t, answers[i]]);
    } catch (e) { streamDiff.push([i, String(e)]); }
  }
  check('sequential streams equal the non-streamed answers', streamDiff.length === 0, streamDiff);
  const tSeq = Date.now() - t0;

  // 32 clients x 8 requests, each client on its own keep-alive agent, half the requests streamed
  const N_CLIENTS = 32, PER = 8;
  const t1 = Date.now();
  const errors = [], mismatches = [];
  let done = 0, streamed = 0, reused = 0;
  async function client(c) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set();
    for (let r = 0; r < PER; r++) {
      const pi = (c * 7 + r * 5) % prompts.length;
      const stream = (c + r) % 2 === 0;
      const p = prompts[pi];
      try {
        const res = await post(p.path, stream ? { ...p.body, stream: true } : p.body, { agent });
        const t = answerText(p.api, stream, res);
        if (t !== answers[pi]) mismatches.push({ client: c, req: r, prompt: pi, stream, got: t, want: answers[pi] });
        done++;
        if (stream) streamed++;
      } catch (e) { errors.push({ client: c, req: r, prompt: pi, stream, err: String(e) }); }
    }
    // sockets the agent kept: one connection served the client's requests
    for (const k in agent.freeSockets) for (const s of agent.freeSockets[k]) sockets.add(s);
    if (sockets.size === 1) reused++;
    agent.destroy();
  }
  await Promise.all(Array.from({ length: N_CLIENTS }, (_, c) => client(c)));
  const tConc = Date.now() - t1;
  check(`${N_CLIENTS} clients x ${PER} requests at once: no error status, no socket error (${done} answered, ${streamed} streamed)`,
        errors.length === 0 && done === N_CLIENTS * PER, errors.slice(0, 5));
  check('every concurrent answer equals its prompt\'s sequential answer byte for byte (nothing crossed between sequences)',
        mismatches.length === 0 && done > 0, { n: mismatches.length, first: mismatches.slice(0, 3) });
  check(`keep-alive: each client's requests went over one connection (${reused} of ${N_CLIENTS})`, reused === N_CLIENTS);
  const m = await metrics();
  check('after the load: no slot busy, nothing queued or running', m.tessera_slots_busy === 0 && m.tessera_queue_length === 0 &&
        m.tessera_requests_running === 0, m);
  console.log(`# elapsed: sequential ${prompts.length * 2} requests ${tSeq} ms; concurrent ${N_CLIENTS * PER} requests ${tConc} ms`);
}

// ---- raw sockets ----
// Sends the chunks (with delays between), collects what comes back until the server closes or
// waitMs passes. {data, closed, err, ms}
function raw(chunks, { waitMs = 3000, endAfter = false, destroyAfter = false } = {}) {
  return new Promise((resolve) => {
    const s = net.connect(PORT, HOST);
    const parts = [];
    let closed = false, err = null, settled = false;
    const t0 = Date.now();
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ data: Buffer.concat(parts).toString('latin1'), closed, err, ms: Date.now() - t0 });
    };
    const timer = setTimeout(finish, waitMs);
    s.on('data', (d) => parts.push(d));
    s.on('error', (e) => { err = e.code || String(e); });
    s.on('end', () => { closed = true; });
    s.on('close', () => { closed = true; finish(); });
    s.on('connect', async () => {
      for (const c of chunks) {
        if (typeof c === 'number') await sleep(c);
        else s.write(c);
      }
      if (endAfter) s.end();
      if (destroyAfter) { await sleep(50); finish(); }
    });
  });
}
// The responses in a byte string: [{status, headers, body}]
function parseResponses(data) {
  const out = [];
  let i = 0;
  while (i < data.length) {
    const h = data.indexOf('\r\n\r\n', i);
    if (h < 0) break;
    const lines = data.slice(i, h).split('\r\n');
    const st = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (!st) break;
    const headers = {};
    for (const l of lines.slice(1)) { const k = l.indexOf(':'); headers[l.slice(0, k).toLowerCase()] = l.slice(k + 1).trim(); }
    const n = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(st[1]), headers, body: data.slice(h + 4, h + 4 + n) });
    i = h + 4 + n;
  }
  return out;
}
function openaiError(body) {
  try {
    const o = JSON.parse(body);
    return o && typeof o.error === 'object' && typeof o.error.message === 'string' && o.error.message.length > 0 &&
           typeof o.error.type === 'string';
  } catch { return false; }
}

async function modeMalformed(timeoutS) {
  const H = `Host: ${HOST}:${PORT}\r\n`;
  const postRaw = (path, body, extra = '') =>
    `POST ${path} HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

  // bad JSON
  for (const [name, body] of [['a truncated object', '{"messages": ['], ['not JSON at all', 'hello'], ['an empty body', '']]) {
    const r = await raw([postRaw('/v1/chat/completions', body, 'Connection: close\r\n')]);
    const rs = parseResponses(r.data);
    check(`bad JSON (${name}): 400 with an OpenAI error body`, rs.length === 1 && rs[0].status === 400 && openaiError(rs[0].body), r.data.slice(0, 300));
  }
  // wrong types
  const wrong = [
    ['chat', { messages: 'hello' }],
    ['chat', { messages: [{ role: 'user', content: 'x' }], max_tokens: 'ten' }],
    ['chat', { messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }],
    ['chat', { messages: [{ role: 'user', content: 'x' }], stream: 'yes' }],
    ['chat', { messages: [{ role: 7, content: 'x' }] }],
    ['chat', [1, 2, 3]],
    ['completions', { prompt: { text: 'x' } }],
    ['completions', { prompt: 'x', n: 'two' }],
    ['completions', { prompt: 'x', stop: 5 }],
  ];
  const bad = [];
  for (const [api, body] of wrong) {
    const r = await post(api === 'chat' ? '/v1/chat/completions' : '/v1/completions', body);
    let shaped = false;
    try { const e = JSON.parse(r.text).error; shaped = openaiError(r.text) && e.type === 'invalid_request_error'; } catch {}
    if (r.status !== 400 || !shaped) bad.push({ body, status: r.status, text: r.text.slice(0, 200) });
  }
  check(`wrong types (${wrong.length} bodies): 400, {"error": {"message", "type": "invalid_request_error"}}`, bad.length === 0, bad);

  // a declared 100 MB body: 413 at once, the body never sent
  {
    const r = await raw([`POST /v1/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n`], { waitMs: 3000 });
    const rs = parseResponses(r.data);
    check(`Content-Length 100 MB: 413 before the body (in ${r.ms} ms), OpenAI error body, connection closed`,
          rs.length === 1 && rs[0].status === 413 && openaiError(rs[0].body) && r.closed && r.ms < 2500, { data: r.data.slice(0, 300), closed: r.closed, err: r.err });
  }
  // a 40 KB header: 431
  {
    const r = await raw([`GET /v1/models HTTP/1.1\r\n${H}X-Big: ${'a'.repeat(40000)}\r\n\r\n`]);
    const rs = parseResponses(r.data);
    check(`a 40 KB header: 431, connection closed (${r.err ?? 'no socket error'})`, rs.length === 1 && rs[0].status === 431 && r.closed,
          { data: r.data.slice(0, 300), closed: r.closed, err: r.err });
  }
  // many small headers over the limit as separate writes: still 431
  {
    const chunks = [`GET /v1/models HTTP/1.1\r\n${H}`];
    for (let i = 0; i < 40; i++) chunks.push(`X-H${i}: ${'b'.repeat(1000)}\r\n`, 5);
    chunks.push('\r\n');
    const r = await raw(chunks);
    const rs = parseResponses(r.data);
    check('headers trickled past 16 KiB in 40 writes: 431', rs.length === 1 && rs[0].status === 431, { data: r.data.slice(0, 300), err: r.err });
  }
  // a truncated chunked body, then the client closes: no answer owed, no crash
  {
    const r = await raw([`POST /v1/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n{"prompt": "Once upon", "max`], { endAfter: true, waitMs: 1000 });
    const r2 = await raw([`POST /v1/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1a\r\n{"prompt": "Once", "max_to`], { destroyAfter: true });
    const h = await request('GET', '/health');
    check('a truncated chunked body, then the client closes (half-close and reset): nothing answered, the server still up',
          r.data === '' && h.status === 200, { data: r.data.slice(0, 200), r2: r2.data.slice(0, 200), health: h.status });
  }
  // a complete chunked body works
  {
    const body = JSON.stringify({ prompt: 'Once upon', max_tokens: 2, temperature: 0 });
    const r = await raw([`POST /v1/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
                         `5\r\n${body.slice(0, 5)}\r\n`, 30, `${(body.length - 5).toString(16)}\r\n${body.slice(5)}\r\n0\r\n\r\n`]);
    const rs = parseResponses(r.data);
    check('a chunked request body in two writes: 200', rs.length === 1 && rs[0].status === 200, r.data.slice(0, 300));
  }
  // slow headers: half a request line, then nothing for longer than --timeout; at the same time the
  // same after a HEAD on that connection (its 408, if sent, must carry the body it declares)
  {
    const [r, rh] = await Promise.all([raw(['GET /hea'], { waitMs: (timeoutS + 3) * 1000 }),
                                       raw([`HEAD /health HTTP/1.1\r\n${H}\r\n`, 100, 'GET /hea'], { waitMs: (timeoutS + 3) * 1000 })]);
    {
      const h = rh.data.indexOf('\r\n\r\n');
      const rest = h < 0 ? '' : rh.data.slice(h + 4);
      const rs2 = parseResponses(rest);
      check('after a HEAD, a request that does not arrive in time: a 408 whose body matches its Content-Length, or just the close',
            /^HTTP\/1\.1 200/.test(rh.data) && rh.closed && (rest === '' || (rs2.length === 1 && rs2[0].status === 408 &&
            Buffer.byteLength(rs2[0].body, 'latin1') === Number(rs2[0].headers['content-length']) && openaiError(rs2[0].body))),
            rh.data.slice(0, 400));
    }
    const rs = parseResponses(r.data);
    check(`slow headers (half a request line, then silence): 408 or closed by the server after ~${timeoutS} s (${r.ms} ms)`,
          r.closed && r.ms < (timeoutS + 2.5) * 1000 && (rs.length === 0 ? r.data === '' : rs[0].status === 408), { data: r.data.slice(0, 300), ms: r.ms });
  }
  // a request line in pieces within the timeout is fine
  {
    const r = await raw(['GET /hea', 300, 'lth HTTP/1.1\r\n', 300, `${H}Connection: close\r\n\r\n`]);
    const rs = parseResponses(r.data);
    check('a request sent in 3 pieces over 0.6 s: 200', rs.length === 1 && rs[0].status === 200, r.data.slice(0, 300));
  }
  // two pipelined GETs in one write: two responses, in order
  {
    const r = await raw([`GET /health HTTP/1.1\r\n${H}\r\nGET /v1/models HTTP/1.1\r\n${H}Connection: close\r\n\r\n`]);
    const rs = parseResponses(r.data);
    check('two pipelined GETs in one write: two 200 responses in order, then close',
          rs.length === 2 && rs[0].status === 200 && /"status"/.test(rs[0].body) && rs[1].status === 200 && /"object": ?"list"/.test(rs[1].body) && r.closed,
          r.data.slice(0, 600));
  }
  // a pipelined POST then GET: the GET waits for the completion's answer
  {
    const body = JSON.stringify({ prompt: 'Once upon', max_tokens: 8, temperature: 0 });
    const r = await raw([postRaw('/v1/completions', body) + `GET /health HTTP/1.1\r\n${H}Connection: close\r\n\r\n`], { waitMs: 10000 });
    const rs = parseResponses(r.data);
    check('a pipelined completion then a GET: the completion answered first, then the GET',
          rs.length === 2 && rs[0].status === 200 && /"choices"/.test(rs[0].body) && rs[1].status === 200 && /"status"/.test(rs[1].body),
          r.data.slice(0, 600));
  }
  // a whole request, then the client shuts its sending side (half-close) and waits for the answer;
  // 6 tries, while a long completion keeps the server's loop busy (the FIN then comes in the same
  // read as the request)
  {
    const busy = post('/v1/completions', { prompt: 'Once upon', max_tokens: 100, ignore_eos: true, temperature: 0 }).catch((e) => ({ status: String(e) }));
    await sleep(50);
    const got = [];
    for (let k = 0; k < 6; k++) {
      const r = await raw([`GET /health HTTP/1.1\r\n${H}Connection: close\r\n\r\n`], { endAfter: true });
      const rs = parseResponses(r.data);
      got.push(rs.length === 1 ? rs[0].status : r.data === '' ? 'nothing' : r.data.slice(0, 60));
    }
    const b = await busy;
    check(`a whole GET, then the client half-closes (shutdown SHUT_WR): still answered 200 (6 tries: ${got.join(' ')})`,
          got.every((x) => x === 200) && b.status === 200, { got, busy: b.status });
  }
  // HEAD: the head of the GET response without its body, so a pipelined request after it stays framed
  {
    const r = await raw([`HEAD /health HTTP/1.1\r\n${H}\r\nGET /v1/models HTTP/1.1\r\n${H}Connection: close\r\n\r\n`]);
    const h = r.data.indexOf('\r\n\r\n');
    const rest = h < 0 ? '' : r.data.slice(h + 4);
    check('HEAD /health pipelined with a GET: a 200 head without a body, then the GET\'s response',
          /^HTTP\/1\.1 200/.test(r.data) && /^HTTP\/1\.1 200[^]*"object": ?"list"/.test(rest), r.data.slice(0, 400));
  }
  // HTTP/1.0 without keep-alive: a response, then the server closes
  {
    const r = await raw(['GET /health HTTP/1.0\r\n\r\n']);
    const rs = parseResponses(r.data);
    check(`HTTP/1.0 without keep-alive: 200, then the server closes (${r.ms} ms)`, rs.length === 1 && rs[0].status === 200 && r.closed && r.ms < 2000,
          { data: r.data.slice(0, 300), closed: r.closed });
  }
  // HTTP/1.0 asking for keep-alive: kept open (and said so), a second request on it answered
  {
    const r = await raw([`GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n`, 200, `GET /v1/models HTTP/1.0\r\n\r\n`]);
    const rs = parseResponses(r.data);
    check('HTTP/1.0 with Connection: keep-alive: "Connection: keep-alive" in the answer, a second request answered, then close',
          rs.length === 2 && rs[0].status === 200 && /keep-alive/i.test(rs[0].headers['connection'] ?? '') && rs[1].status === 200 && r.closed,
          r.data.slice(0, 500));
  }
  // Expect: 100-continue: the interim answer, then the body, then the completion
  {
    const body = JSON.stringify({ prompt: 'Once upon', max_tokens: 2, temperature: 0 });
    const r = await raw([`POST /v1/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
                         300, body], { waitMs: 5000 });
    check('Expect: 100-continue: "100 Continue" before the body, then 200', /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200/.test(r.data), r.data.slice(0, 300));
  }
  // HTTP/1.0 stream: no chunked coding, closed at the end
  {
    const body = JSON.stringify({ prompt: 'Once upon', max_tokens: 4, temperature: 0, stream: true });
    const r = await raw([`POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`], { waitMs: 10000 });
    check('an HTTP/1.0 stream: no chunked coding, ends with [DONE], then close',
          /^HTTP\/1\.1 200/.test(r.data) && !/transfer-encoding/i.test(r.data) && r.data.endsWith('data: [DONE]\n\n') && r.closed, r.data.slice(0, 400));
  }
  // garbage and smuggling-shaped heads
  for (const [name, head, want] of [
    ['a binary request line', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n', 400],
    ['Content-Length with Transfer-Encoding', `POST /v1/completions HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400],
    ['HTTP/2.0', 'GET /health HTTP/2.0\r\n\r\n', 505],
    ['Transfer-Encoding: gzip', `POST /v1/completions HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\n`, 501],
    ['a 10 KB target', `GET /${'x'.repeat(10000)} HTTP/1.1\r\n${H}\r\n`, 414],
  ]) {
    const r = await raw([head]);
    const rs = parseResponses(r.data);
    check(`${name}: ${want}, then close`, rs.length === 1 && rs[0].status === want && r.closed, r.data.slice(0, 300));
  }
  // after all of it: a normal request
  {
    const r = await post('/v1/completions', { prompt: 'Once upon', max_tokens: 4, temperature: 0 });
    const m = await metrics();
    check('after the abuse: a normal completion gets 200, nothing left running', r.status === 200 && m.tessera_requests_running === 0 &&
          m.tessera_slots_busy === 0, { status: r.status, m });
  }
}

// ---- idle connections ----
async function modeIdle(n) {
  const before = (await metrics()).tessera_connections;
  const socks = [];
  const closedBy = new Set();
  let connectErr = 0;
  const open = (i) => new Promise((resolve) => {
    const s = net.connect(PORT, HOST);
    s.setKeepAlive(false);
    s.on('connect', () => resolve(true));
    s.on('error', () => { connectErr++; resolve(false); });
    s.on('close', () => closedBy.add(i));
    s.on('data', () => {});
    socks[i] = s;
  });
  const t0 = Date.now();
  // the first 10 opened apart (the longest idle), then the rest in waves
  const EARLY = Math.min(10, n);
  await Promise.all(Array.from({ length: EARLY }, (_, i) => open(i)));
  await sleep(300);
  for (let i = EARLY; i < n; i += 500) await Promise.all(Array.from({ length: Math.min(500, n - i) }, (_, k) => open(i + k)));
  await sleep(500);   // the server accepts them all
  const tOpen = Date.now() - t0;
  check(`${n} idle connections opened (${tOpen} ms), none refused or closed yet`, connectErr === 0 && closedBy.size === 0,
        { connectErr, closed: closedBy.size });
  // a normal request makes the longest-idle connection give way
  let r, err = null;
  try { r = await post('/v1/completions', { prompt: 'Once upon', max_tokens: 4, temperature: 0 }, { timeout: 20000 }); }
  catch (e) { err = String(e); }
  await sleep(300);
  const evicted = [...closedBy].sort((a, b) => a - b);
  check(`at --max-connections ${n}: a new request is answered 200`, !err && r.status === 200, { err, status: r?.status, text: r?.text?.slice(0, 200) });
  check(`the server made room by closing the longest-idle connection (closed: ${JSON.stringify(evicted.slice(0, 5))})`,
        evicted.length >= 1 && evicted.length <= 2 && evicted.every((i) => i < EARLY), evicted.slice(0, 20));
  // the survivors still work: one of the late idle connections sends a request
  const s = socks[n - 1];
  const got = await new Promise((resolve) => {
    let d = '';
    const t = setTimeout(() => resolve(d), 5000);
    s.on('data', (x) => { d += x; if (d.includes('\r\n\r\n') && /"status"/.test(d)) { clearTimeout(t); resolve(d); } });
    s.write(`GET /health HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
  check('a connection held idle all along still gets its answer', /^HTTP\/1\.1 200/.test(got), got.slice(0, 200));
  for (const x of socks) x.destroy();
  let after = -1;
  for (let k = 0; k < 50; k++) {
    await sleep(100);
    after = (await metrics()).tessera_connections;
    if (after <= before) break;
  }
  check(`all closed: /metrics tessera_connections back to ${before} (${after})`, after <= before, { before, after });
}

// ---- cancel ----
async function waitIdle(ms) {
  const t0 = Date.now();
  let m;
  for (;;) {
    m = await metrics();
    if (m.tessera_slots_busy === 0 && m.tessera_requests_running === 0 && m.tessera_queue_length === 0) return { ok: true, ms: Date.now() - t0, m };
    if (Date.now() - t0 > ms) return { ok: false, ms: Date.now() - t0, m };
    await sleep(50);
  }
}
async function modeCancel() {
  const long = { prompt: 'Once upon a time', max_tokens: 200, ignore_eos: true, temperature: 0 };
  // for scale: how long the whole request takes
  const t0 = Date.now();
  const full = await post('/v1/completions', long);
  const tFull = Date.now() - t0;
  const fullTokens = JSON.parse(full.text).usage?.completion_tokens;
  check(`for scale: the whole request (${fullTokens} tokens) takes ${tFull} ms`, full.status === 200 && fullTokens === 200, full.text.slice(0, 200));

  // a stream: the first chunk read, then the socket destroyed
  let g0 = (await metrics()).tessera_generated_tokens_total;
  const first = await new Promise((resolve) => {
    const body = JSON.stringify({ ...long, stream: true });
    const rq = http.request({ host: HOST, port: PORT, method: 'POST', path: '/v1/completions', agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': body.length } }, (res) => {
      res.once('data', (d) => { rq.destroy(); resolve(String(d)); });
    });
    rq.on('error', () => {});
    rq.end(body);
  });
  check('a stream\'s first chunk arrives', first.includes('data: '), first.slice(0, 200));
  let w = await waitIdle(2000);
  check(`a stream whose client goes away: slots and running requests back to 0 in ${w.ms} ms (whole run ${tFull} ms)`, w.ok, w.m);
  let g1 = (await metrics()).tessera_generated_tokens_total;
  check('  and it was cancelled, not run to its end (no completed 200-token request counted)', g1 === g0, { g0, g1 });

  // not streamed: the client closes before the answer
  g0 = (await metrics()).tessera_generated_tokens_total;
  const tc = Date.now();
  await new Promise((resolve) => {
    const body = JSON.stringify(long);
    const rq = http.request({ host: HOST, port: PORT, method: 'POST', path: '/v1/completions', agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': body.length } }, () => resolve());
    rq.on('error', () => resolve());
    rq.end(body);
    setTimeout(async () => {
      const m = await metrics();
      console.log(`# while the non-streamed request runs: slots busy ${m.tessera_slots_busy}, running ${m.tessera_requests_running}`);
      rq.destroy();
      resolve();
    }, Math.min(150, tFull / 4));
  });
  w = await waitIdle(2000);
  check(`a non-streamed request whose client closes early: back to idle in ${w.ms} ms (closed after ${Date.now() - tc - w.ms} ms)`, w.ok, w.m);
  g1 = (await metrics()).tessera_generated_tokens_total;
  check('  and it was cancelled, not run to its end', g1 === g0, { g0, g1 });

  // a client that closes while its request still waits in the queue (every slot taken)
  const m0 = await metrics();
  const slots = m0.tessera_slots;
  const fillers = Array.from({ length: slots }, () => post('/v1/completions', long).catch((e) => ({ status: String(e) })));
  await sleep(100);
  let qm;
  await new Promise((resolve) => {
    const body = JSON.stringify(long);
    const rq = http.request({ host: HOST, port: PORT, method: 'POST', path: '/v1/completions', agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': body.length } }, () => resolve());
    rq.on('error', () => resolve());
    rq.end(body);
    setTimeout(async () => { qm = await metrics(); rq.destroy(); resolve(); }, 100);
  });
  await sleep(200);
  const qm2 = await metrics();
  const fr = await Promise.all(fillers);
  w = await waitIdle(5000);
  check(`a queued request whose client goes away leaves the queue (queue ${qm.tessera_queue_length} -> ${qm2.tessera_queue_length}; ${slots} slots)`,
        qm2.tessera_queue_length === 0 && fr.every((r) => r.status === 200) && w.ok, { qm, qm2, fr: fr.map((r) => r.status), w });
  const after = await post('/v1/completions', { prompt: 'Once upon', max_tokens: 4, temperature: 0 });
  check('after the cancellations: a normal request gets 200', after.status === 200, after.text.slice(0, 200));
}

// ---- queue ----
async function modeQueue() {
  const long = { prompt: 'Once upon a time', max_tokens: 100, ignore_eos: true, temperature: 0 };
  const rs = await Promise.all(Array.from({ length: 8 }, (_, i) =>
    post(i % 2 ? '/v1/completions' : '/v1/chat/completions',
         i % 2 ? long : { messages: [{ role: 'user', content: 'Tell a story.' }], max_tokens: 100, ignore_eos: true, temperature: 0, stream: i % 4 === 0 })
      .catch((e) => ({ status: String(e), headers: {}, text: '' }))));
  const st = rs.map((r) => r.status);
  const n429 = st.filter((s) => s === 429).length, n200 = st.filter((s) => s === 200).length;
  check(`8 concurrent long requests at -np 1 --queue 2: only 200 and 429 (${n200} x 200, ${n429} x 429)`, n200 + n429 === 8 && n429 >= 1 && n200 >= 3, st);
  const bad429 = rs.filter((r) => r.status === 429 && !(r.headers['retry-after'] && /^\d+$/.test(r.headers['retry-after']) &&
    openaiError(r.text) && JSON.parse(r.text).error.type === 'rate_limit_error'));
  check('each 429 has a Retry-After header and an OpenAI error body (type rate_limit_error)', n429 > 0 && bad429.length === 0,
        bad429.map((r) => [r.headers, r.text]));
  const bad200 = [];
  rs.forEach((r, i) => {
    if (r.status !== 200) return;
    try {
      const stream = i % 4 === 0;
      const t = answerText(i % 2 ? 'completions' : 'chat', stream, r);
      if (!stream && JSON.parse(r.text).usage.completion_tokens !== 100) bad200.push([i, 'tokens', r.text.slice(0, 200)]);
      if (!t.length) bad200.push([i, 'empty']);
    } catch (e) { bad200.push([i, String(e)]); }
  });
  check('each 200 is a whole answer (100 tokens)', bad200.length === 0, bad200);
  const w = await waitIdle(3000);
  check('then: queue empty, nothing running', w.ok, w.m);
}

// ---- every connection waiting on an answer ----
async function modeBusy(maxConn) {
  // 240 tokens (the context is 256): about 0.3 s each at -np 1 under ASan, so all still wait at 60 ms;
  // a faster build may finish the first before the new connection comes: up to 3 tries (a 503 can
  // only come when every connection waits)
  const long = { prompt: 'Once upon a time', max_tokens: 240, ignore_eos: true, temperature: 0 };
  let r, rs, w, tries = 0;
  do {
    tries++;
    const waiting = Array.from({ length: maxConn }, () => post('/v1/completions', long).catch((e) => ({ status: String(e) })));
    await sleep(60);
    r = await raw([`GET /health HTTP/1.1\r\nHost: x\r\n\r\n`], { waitMs: 3000 });
    rs = parseResponses(r.data);
    w = await Promise.all(waiting);
  } while (tries < 3 && !(rs.length === 1 && rs[0].status === 503));
  check(`all ${maxConn} connections waiting on answers: a new one gets 503 with Retry-After, then close (try ${tries})`,
        rs.length === 1 && rs[0].status === 503 && rs[0].headers['retry-after'] && r.closed, r.data.slice(0, 300));
  check(`the ${maxConn} waiting requests are answered 200`, w.every((x) => x.status === 200), w.map((x) => x.status));
  const h = await request('GET', '/health');
  check('then a new connection is served again', h.status === 200, h.status);
}

try {
  if (mode === 'load') await modeLoad(arg);
  else if (mode === 'warmup') await modeWarmup(arg);
  else if (mode === 'malformed') await modeMalformed(Number(arg || 3));
  else if (mode === 'idle') await modeIdle(Number(arg || 100));
  else if (mode === 'cancel') await modeCancel();
  else if (mode === 'queue') await modeQueue();
  else if (mode === 'busy') await modeBusy(Number(arg || 3));
  else { console.error('usage: node load.mjs warmup|load|malformed|idle|cancel|queue|busy BASE [ARG]'); process.exit(2); }
} catch (e) {
  check(`${mode}: ran to its end`, false, String(e && e.stack || e));
}
process.exit(failed ? 1 : 0);
