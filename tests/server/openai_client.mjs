// The server driven by the official `openai` npm package (tests/sh/test_server.sh).
// Usage: node openai_client.mjs BASE_URL CASES.json RAW.json
// CASES.json: [{"system", "user", "expected"}]: "expected" is what `./run MODEL --system S USER
// --temp 0 -n 24` printed for the same question; RAW.json: {"prompt", "expected"}, what
// `./run MODEL PROMPT --raw -n 5 --temp 0` printed. Prints TAP-style "ok - " / "not ok - " lines.
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';

const [base, casesPath, rawPath] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesPath, 'utf8'));
const raw = JSON.parse(readFileSync(rawPath, 'utf8'));
const client = new OpenAI({ baseURL: base + '/v1', apiKey: 'test-key', maxRetries: 0, timeout: 60000 });
const msgs = (c) => [{ role: 'system', content: c.system }, { role: 'user', content: c.user }];
let failed = 0;
function check(name, ok, detail) {
  console.log((ok ? 'ok - ' : 'not ok - ') + name + (ok || detail === undefined ? '' : ' # ' + JSON.stringify(detail)));
  if (!ok) failed++;
}

// /v1/models
const models = await client.models.list();
check('models.list names the model', models.data.length === 1 && models.data[0].object === 'model' && models.data[0].id.length > 0,
      models.data);

// non-streaming, temperature 0: the content equals the CLI's answer byte for byte
let same = true, detail = [];
for (const c of cases) {
  const r = await client.chat.completions.create({ model: 'any', messages: msgs(c), temperature: 0, max_tokens: 24 });
  const content = r.choices[0].message.content;
  if (content !== c.expected || r.object !== 'chat.completion' || r.choices[0].message.role !== 'assistant' ||
      r.usage.total_tokens !== r.usage.prompt_tokens + r.usage.completion_tokens) { same = false; detail.push([content, c.expected]); }
}
check(`chat.completions (${cases.length} questions, temperature 0) equal ./run's answers byte for byte`, same, detail);

// streaming: the deltas joined equal the same answers; the last chunk has the finish reason; usage at the end
same = true; detail = [];
for (const c of cases) {
  const stream = await client.chat.completions.create({ model: 'any', messages: msgs(c), temperature: 0, max_tokens: 24,
                                                         stream: true, stream_options: { include_usage: true } });
  let text = '', finish = null, usage = null, chunks = 0, role = null;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const ch of chunk.choices) {
      if (ch.delta.role) role = ch.delta.role;
      if (ch.delta.content) text += ch.delta.content;
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  if (text !== c.expected || !finish || role !== 'assistant' || !usage || usage.completion_tokens < 1 || chunks < 3) {
    same = false; detail.push([text, c.expected, finish, usage, chunks]);
  }
}
check('streamed chat.completions: the deltas equal the same answers, a finish_reason, usage last', same, detail);

// n = 2, sampled with a seed: two choices, each repeatable with the same seed
const c0 = cases[0];
const a = await client.chat.completions.create({ model: 'any', messages: msgs(c0), temperature: 1.5, seed: 7, n: 2, max_tokens: 12 });
const b = await client.chat.completions.create({ model: 'any', messages: msgs(c0), temperature: 1.5, seed: 7, n: 2, max_tokens: 12 });
check('n = 2: two choices with indexes 0 and 1, the same again with the same seed',
      a.choices.length === 2 && a.choices[0].index === 0 && a.choices[1].index === 1 &&
      a.choices.map(x => x.message.content).join('|') === b.choices.map(x => x.message.content).join('|'),
      [a.choices, b.choices]);
const g = await client.chat.completions.create({ model: 'any', messages: msgs(c0), temperature: 0, n: 2, max_tokens: 24 });
check('n = 2 at temperature 0: both choices are the greedy answer',
      g.choices.every(x => x.message.content === c0.expected), g.choices);

// stop strings: the answer ends before the first stop string, finish_reason "stop"
const full = c0.expected;
const cut = full.indexOf(' ') > 0 ? full.slice(full.indexOf(' ') + 1, full.indexOf(' ') + 3) : full.slice(1, 3);
const s = await client.chat.completions.create({ model: 'any', messages: msgs(c0), temperature: 0, max_tokens: 24, stop: [cut, 'zzzz'] });
check(`stop ["${cut}", "zzzz"]: the answer is cut before it, finish_reason stop`,
      s.choices[0].message.content === full.slice(0, full.indexOf(cut)) && s.choices[0].finish_reason === 'stop',
      [s.choices[0], full]);
const st = await client.chat.completions.create({ model: 'any', messages: msgs(c0), temperature: 0, max_tokens: 24, stop: cut, stream: true });
let stText = '';
for await (const chunk of st) for (const ch of chunk.choices) stText += ch.delta.content || '';
check('a stop string in a stream: nothing of it is streamed', stText === full.slice(0, full.indexOf(cut)), [stText]);

// max_tokens: finish_reason length
const l = await client.chat.completions.create({ model: 'any', messages: msgs(c0), temperature: 0, max_tokens: 2 });
check('max_tokens 2: two tokens, finish_reason length', l.usage.completion_tokens === 2 && l.choices[0].finish_reason === 'length', l);

// logprobs: one entry per token, the texts joined are the answer
const lp = await client.chat.completions.create({ model: 'any', messages: msgs(c0), temperature: 0, max_tokens: 24, logprobs: true, top_logprobs: 2 });
const content = lp.choices[0].logprobs.content;
check('logprobs: the tokens joined are the answer; the greedy token is the top alternative',
      content.map(t => t.token).join('') === lp.choices[0].message.content &&
      content.every(t => t.top_logprobs.length === 2 && t.top_logprobs[0].token === t.token && t.logprob <= 0), content);

// /v1/completions: a text prompt without the template
const comp = await client.completions.create({ model: 'any', prompt: raw.prompt, max_tokens: 5, temperature: 0 });
check('completions.create: a text_completion whose text equals ./run --raw on the same prompt',
      comp.object === 'text_completion' && comp.choices[0].text === raw.expected && raw.expected.length > 0, [comp, raw]);

// a wrong type: a 400 the client raises as BadRequestError with OpenAI's error shape
try {
  await client.chat.completions.create({ model: 'any', messages: msgs(c0), temperature: 'hot' });
  check('a wrong type is a 400', false, 'no error');
} catch (e) {
  check('a wrong type is a 400 (BadRequestError) naming the field', e.status === 400 && /temperature/.test(e.message), [e.status, e.message]);
}
// response_format json_schema: the answer is JSON that the schema accepts, whole (finish_reason stop),
// streamed or not
const schema = { type: 'object', properties: { director: { type: 'string', maxLength: 20 }, year: { type: 'integer', minimum: 1900, maximum: 2100 } },
                 required: ['director', 'year'], additionalProperties: false };
const rf = { type: 'json_schema', json_schema: { name: 'film', schema, strict: true } };
const valid = (text) => {
  try {
    const v = JSON.parse(text);
    return Object.keys(v).join(',') === 'director,year' && typeof v.director === 'string' && v.director.length <= 20 &&
           Number.isInteger(v.year) && v.year >= 1900 && v.year <= 2100;
  } catch (e) { return false; }
};
const shaped = await client.chat.completions.create({ model: 'any', messages: msgs(c0), response_format: rf, max_tokens: 120, temperature: 0.8, seed: 5 });
check('response_format json_schema: the content parses and fits the schema, finish_reason stop',
      valid(shaped.choices[0].message.content) && shaped.choices[0].finish_reason === 'stop', shaped.choices[0]);
const shapedStream = await client.chat.completions.create({ model: 'any', messages: msgs(c0), response_format: rf, max_tokens: 120, temperature: 0.8, seed: 5, stream: true });
let streamedText = '';
for await (const chunk of shapedStream) streamedText += chunk.choices[0]?.delta?.content ?? '';
check('response_format json_schema streamed: the same answer', streamedText === shaped.choices[0].message.content, [streamedText]);
const obj = await client.chat.completions.create({ model: 'any', messages: msgs(c0), response_format: { type: 'json_object' }, max_tokens: 200, temperature: 0 });
check('response_format json_object: an object (or, cut by max_tokens, finish_reason length)',
      obj.choices[0].finish_reason === 'length' || (() => { try { const v = JSON.parse(obj.choices[0].message.content); return v && typeof v === 'object' && !Array.isArray(v); } catch (e) { return false; } })(),
      obj.choices[0]);
try {
  await client.chat.completions.create({ model: 'any', messages: msgs(c0), response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', not: {} } } } });
  check('an unsupported schema keyword is refused', false, 'no error');
} catch (e) {
  check('an unsupported schema keyword is a 400 naming it', e.status === 400 && /"not"/.test(e.message), [e.status, e.message]);
}
process.exit(failed ? 1 : 0);
