// A protocol-v1 adapter (harness/protocol/PROTOCOL.md) around transformers.js's own generation code, as
// installed from npm by `make engines` (@huggingface/transformers, pinned in engines.mk).
//
//   node transformers_js.mjs DIR    DIR is build/engines/transformers-js (the folder whose
//                                   node_modules holds the package), or the package folder
//                                   itself; or set SIEVE_TRANSFORMERS_JS_DIR.
//
// Nothing here filters or samples. Each row goes the way PreTrainedModel.generate() sends a
// step's logits (src/models/modeling_utils.js):
//   1. a GenerationConfig {do_sample: true, temperature, top_k, top_p, repetition_penalty} (the
//      protocol's parameters as they come; a blacklist becomes its suppress_tokens);
//   2. PreTrainedModel.prototype._get_logits_processor(generation_config, ...): the package's
//      processor list (RepetitionPenaltyLogitsProcessor, SuppressTokensLogitsProcessor,
//      TemperatureLogitsWarper; temperature 0 turns do_sample off), applied to a float32 Tensor
//      [1, V] of the logits with the row's prompt_ids then output_ids as all_input_ids (what
//      generate() passes: the prompt, then each token generated);
//   3. LogitsSampler.getSampler(generation_config) (src/generation/logits_sampler.js):
//      MultinomialSampler, which keeps the top_k best (the ONNX TopK op, through
//      onnxruntime-node) and draws from their softmax with the package's Mersenne Twister
//      (src/utils/random.js), or GreedySampler when do_sample is off.
// In 4.3.x _get_logits_processor adds no TopKLogitsWarper or TopPLogitsWarper (they are
// commented out, and neither class has a _call), so top_p reaches nothing.
//
// filter: the tokens the sampler draws from, read from the sampler itself: a second sampler
// instance whose randomSelect hands back every index in turn (and num_beams = V) returns each
// candidate's token id; their logprobs are the package's log_softmax (src/utils/maths.js) over
// their processed logits in a Float32Array; the rest are null. sample: the package's sampler
// draws (its global random seeded from the request's seed and position); the token's logprob
// is the filter's.
//
// An exception thrown by the package's code (a non-integer top_k reaches BigInt() in topk) is
// that row's {"error":{"kind":"invalid_request","field":"engine_exception",...}}.

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// The package logs through console.*; protocol answers alone go to stdout.
for (const level of ['log', 'info', 'debug', 'warn']) {
    console[level] = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');
}

const PKG = '@huggingface/transformers';

function packageDir(base) {
    if (!base) {
        process.stderr.write('usage: transformers_js.mjs DIR (or set SIEVE_TRANSFORMERS_JS_DIR)\n');
        process.exit(2);
    }
    for (const dir of [path.join(base, 'node_modules', PKG), base]) {
        const manifest = path.join(dir, 'package.json');
        if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, 'utf8')).name === PKG) {
            return path.resolve(dir);
        }
    }
    process.stderr.write(`transformers_js.mjs: no ${PKG} in ${base} (run \`make engines\`)\n`);
    process.exit(2);
}

const pkgDir = packageDir(process.argv[2] ?? process.env.SIEVE_TRANSFORMERS_JS_DIR);
const pkgVersion = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
const fromPackage = (file) => import(pathToFileURL(path.join(pkgDir, 'src', file)).href);

const [{ GenerationConfig }, { PreTrainedModel }, { LogitsSampler }, { Tensor }, { random }, { log_softmax }] =
    await Promise.all([
        fromPackage('generation/configuration_utils.js'),
        fromPackage('models/modeling_utils.js'),
        fromPackage('generation/logits_sampler.js'),
        fromPackage('utils/tensor.js'),
        fromPackage('utils/random.js'),
        fromPackage('utils/maths.js'),
    ]);

let ortVersion = '?';
try {
    const require = createRequire(path.join(pkgDir, 'package.json'));
    ortVersion = require('onnxruntime-node/package.json').version;
} catch {
    // the version string says '?'
}
const VERSION = `${PKG} ${pkgVersion} (onnxruntime-node ${ortVersion})`;

// ---- protocol values ----

class ProtocolError extends Error {
    constructor(kind, field, message) {
        super(message);
        this.kind = kind;
        this.field = field;
    }
}
const fail = (kind, field, message) => {
    throw new ProtocolError(kind, field, message);
};
const errorAnswer = (kind, field, message) => ({ error: { kind, field, message } });

const isObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);

function checkKeys(obj, keys, where) {
    for (const key of Object.keys(obj)) {
        if (!keys.includes(key)) fail('invalid_request', key, `${where}: unknown key "${key}"`);
    }
}

function number(x) {
    if (typeof x === 'number') return x;
    if (x === 'nan') return NaN;
    if (x === 'inf') return Infinity;
    if (x === '-inf') return -Infinity;
    return undefined;
}

function decimalU64(s) {
    if (typeof s !== 'string' || !/^[0-9]{1,20}$/.test(s)) return undefined;
    const v = BigInt(s);
    return v <= 0xffffffffffffffffn ? v : undefined;
}

function u64(x) {
    if (typeof x === 'string') return decimalU64(x);
    if (typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 2 ** 53) return BigInt(x);
    return undefined;
}

// repetition_penalty is the one sampling option of GenerationConfig (no min_p, no frequency or
// presence penalty, no window: src/generation/configuration_utils.js).
const PARAMS = ['temperature', 'top_p', 'top_k', 'repetition_penalty'];

function readParams(params, where) {
    const p = { temperature: 1, top_p: 1, top_k: -1, repetition_penalty: 1 };
    if (params === undefined) return p;
    if (!isObject(params)) fail('invalid_request', 'params', `${where}.params must be an object`);
    checkKeys(params, PARAMS, `${where}.params`);
    for (const name of PARAMS) {
        if (!(name in params)) continue;
        const v = number(params[name]);
        if (v === undefined) fail('invalid_params', name, `${where}.params.${name} must be a number`);
        p[name] = v;
    }
    return p;
}

function readLogits(logits, where) {
    if (!Array.isArray(logits)) fail('invalid_logits', 'logits', `${where}.logits must be an array of numbers`);
    const row = new Float32Array(logits.length);
    logits.forEach((x, i) => {
        const v = x === null ? -Infinity : number(x);
        if (v === undefined) fail('invalid_logits', 'logits', `${where}.logits[${i}] must be a number or null`);
        row[i] = v;
        if (!Number.isFinite(row[i]) && Number.isFinite(v)) {
            fail('invalid_logits', 'logits', `${where}.logits[${i}] = ${v} is outside the float32 range`);
        }
    });
    return row;
}

function readEngine(engine) {
    if (engine === undefined) return null;
    if (!isObject(engine)) fail('invalid_request', 'engine', 'engine must be an object');
    checkKeys(engine, ['force_topk', 'blacklist'], 'engine');
    if ('force_topk' in engine) {
        fail('invalid_request', 'engine',
            'transformers.js has no force_topk option (generate() has no top-k of the raw logits ' +
            'ahead of its processors); only a blacklist maps onto it, as generation_config.suppress_tokens');
    }
    if (!('blacklist' in engine)) return null;
    if (!Array.isArray(engine.blacklist) || !engine.blacklist.every((x) => typeof x === 'number')) {
        fail('invalid_request', 'blacklist', 'engine.blacklist must be an array of token ids');
    }
    return engine.blacklist;
}

// The 53-bit seed of the package's Mersenne Twister from the request's 64-bit seed and position.
function splitmix64(x) {
    const M = 0xffffffffffffffffn;
    x = (x + 0x9e3779b97f4a7c15n) & M;
    x = ((x ^ (x >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
    x = ((x ^ (x >> 27n)) * 0x94d049bb133111ebn) & M;
    return x ^ (x >> 31n);
}
const drawSeed = (seed, position) => Number(splitmix64(seed ^ splitmix64(position)) >> 11n);

// ---- the engine ----

async function runRow(row, blacklist, sample) {
    const gc = new GenerationConfig({
        do_sample: true,
        temperature: row.params.temperature,
        top_k: row.params.top_k,
        top_p: row.params.top_p,
        repetition_penalty: row.params.repetition_penalty,
        suppress_tokens: blacklist,
    });
    const V = row.logits.length;
    // generate(): prepared_logits_processor = this._get_logits_processor(generation_config, ...)
    const processors = PreTrainedModel.prototype._get_logits_processor.call({}, gc, 1);
    const logits = new Tensor('float32', row.logits, [1, V]);
    // generate(): next_tokens_scores = prepared_logits_processor(all_input_ids, logits)
    const scores = processors([[...row.promptIds, ...row.outputIds]], logits);
    const processed = scores[0];
    // generate(): sampler = LogitsSampler.getSampler(generation_config); sampler(logs)
    const sampler = LogitsSampler.getSampler(gc);

    let ids;
    if (sampler.constructor.name === 'MultinomialSampler') {
        const probe = LogitsSampler.getSampler(gc);
        let next = 0;
        let count = 0;
        probe.randomSelect = (probabilities) => {
            count = probabilities.length;
            return Math.min(next++, probabilities.length - 1);
        };
        probe.generation_config = { ...gc, num_beams: Math.max(V, 1) };
        const all = await probe(processed);
        ids = all.slice(0, count).map(([id]) => Number(id));
    } else {
        const [[id]] = await sampler(processed);
        ids = [Number(id)];
    }
    const logprobs = new Array(V).fill(-Infinity);
    const kept = log_softmax(Float32Array.from(ids, (id) => processed.data[id]));
    ids.forEach((id, j) => {
        logprobs[id] = kept[j];
    });
    if (!sample) return { logprobs };

    random.seed(drawSeed(row.seed, row.position));
    const [[token]] = await sampler(processed);
    const t = Number(token);
    const answer = { token: t, logprob: t >= 0 && t < V ? logprobs[t] : NaN };
    // top_logprobs: the n best of the row the filter answers (best first, ties by token id);
    // the protocol's answer has the list always, empty when n is 0 or not asked.
    answer.top_logprobs = [];
    if (row.nTop) {
        const order = logprobs.map((lp, id) => [id, lp]);
        order.sort((a, b) => {
            const an = Number.isNaN(a[1]);
            const bn = Number.isNaN(b[1]);
            if (an !== bn) return an ? 1 : -1;
            if (!an && a[1] !== b[1]) return b[1] - a[1] > 0 ? 1 : -1;
            return a[0] - b[0];
        });
        answer.top_logprobs = order.slice(0, row.nTop);
    }
    return answer;
}

// A row's token ids as the BigInts of generate()'s all_input_ids (an int64 tensor's tolist()).
function readIds(ids, where, name) {
    if (ids === undefined) return [];
    if (!Array.isArray(ids) || !ids.every((x) => Number.isSafeInteger(x))) {
        fail('invalid_request', name, `${where}.${name} must be an array of integer token ids`);
    }
    return ids.map((x) => BigInt(x));
}

function readRow(item, where, sample) {
    if (!isObject(item)) fail('invalid_request', 'rows', `${where} must be an object`);
    const ids = ['prompt_ids', 'output_ids'];
    checkKeys(item, sample ? ['logits', 'params', 'seed', 'position', 'top_logprobs', ...ids] : ['logits', 'params', ...ids], where);
    const row = { params: readParams(item.params, where),
        promptIds: readIds(item.prompt_ids, where, 'prompt_ids'),
        outputIds: readIds(item.output_ids, where, 'output_ids') };
    if (sample) {
        row.seed = typeof item.seed === 'string' ? decimalU64(item.seed) : undefined;
        if (row.seed === undefined) {
            fail('invalid_request', 'seed', `${where}.seed must be a decimal string in [0, 18446744073709551615]`);
        }
        row.position = u64(item.position);
        if (row.position === undefined) {
            fail('invalid_request', 'position', `${where}.position must be an integer in [0, 2^64-1]`);
        }
        if ('top_logprobs' in item) {
            const n = u64(item.top_logprobs);
            if (n === undefined) fail('invalid_request', 'top_logprobs', `${where}.top_logprobs must be a non-negative integer`);
            row.nTop = Number(n);
        }
    }
    row.logits = readLogits(item.logits, where);
    if (row.nTop !== undefined && row.nTop > row.logits.length) {
        fail('invalid_request', 'top_logprobs', `${where}.top_logprobs = ${row.nTop} exceeds the vocabulary (${row.logits.length})`);
    }
    return row;
}

async function opRows(req, sample) {
    checkKeys(req, sample ? ['op', 'rows', 'case', 'tag', 'engine'] : ['op', 'rows', 'engine'], 'request');
    if (!Array.isArray(req.rows)) fail('invalid_request', 'rows', 'rows must be an array');
    if (sample) {
        if ('case' in req && ![0, 1, 2].includes(req.case)) fail('invalid_request', 'case', 'case must be 0, 1 or 2');
        if ((req.case ?? 0) !== 0) {
            fail('invalid_request', 'case',
                "transformers.js's sampler has one draw; it has no resample-after-rejection (case 1) or accept-test (case 2) draw");
        }
        if ('tag' in req && req.tag !== 'main' && req.tag !== 'mtp') fail('invalid_request', 'tag', 'tag must be "main" or "mtp"');
    }
    let blacklist = null;
    let engineError = null;
    try {
        blacklist = readEngine(req.engine);
    } catch (e) {
        if (!(e instanceof ProtocolError)) throw e;
        engineError = errorAnswer(e.kind, e.field, e.message);
    }
    const rows = [];
    for (const [i, item] of req.rows.entries()) {
        if (engineError) {
            rows.push(engineError);
            continue;
        }
        let row;
        try {
            row = readRow(item, `rows[${i}]`, sample);
        } catch (e) {
            if (!(e instanceof ProtocolError)) throw e;
            rows.push(errorAnswer(e.kind, e.field, e.message));
            continue;
        }
        try {
            rows.push(await runRow(row, blacklist, sample));
        } catch (e) {
            rows.push(errorAnswer('invalid_request', 'engine_exception',
                `rows[${i}]: transformers.js threw ${e?.name ?? 'an exception'}: ${e?.message ?? e}`));
        }
    }
    return { rows };
}

async function answer(line) {
    let req;
    try {
        req = JSON.parse(line);
    } catch {
        return errorAnswer('invalid_request', '', 'the line is not JSON');
    }
    if (!isObject(req)) return errorAnswer('invalid_request', '', 'the line is not a JSON object');
    try {
        switch (req.op) {
            case 'hello':
                checkKeys(req, ['op', 'protocol'], 'request');
                return { protocol: 1, name: 'transformers.js', version: VERSION, ops: ['filter', 'sample'],
                    engine_options: ['blacklist'], sampling_options: ['repetition_penalty'],
                    precision: 'float32', rng: 'own' };
            case 'filter':
                return await opRows(req, false);
            case 'sample':
                return await opRows(req, true);
            case 'bye':
                return { bye: true };
            default:
                if (typeof req.op !== 'string') return errorAnswer('invalid_request', 'op', 'op must be a string');
                return errorAnswer('unsupported_op', 'op', `transformers.js adapter: no op ${req.op}`);
        }
    } catch (e) {
        if (e instanceof ProtocolError) return errorAnswer(e.kind, e.field, e.message);
        return errorAnswer('invalid_request', 'engine_exception', `transformers.js threw ${e?.name}: ${e?.message}`);
    }
}

// Numbers of protocol v1: -inf is null, NaN and +inf are strings.
const encode = (value) =>
    JSON.stringify(value, (key, v) => {
        if (typeof v !== 'number' || Number.isFinite(v)) return v;
        if (Number.isNaN(v)) return 'nan';
        return v > 0 ? 'inf' : null;
    });

const write = (text) => new Promise((resolve) => process.stdout.write(text + '\n', resolve));

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
for await (const line of input) {
    if (!line.trim()) continue;
    const reply = await answer(line);
    await write(encode(reply));
    if (reply.bye) break;
}
input.close();
process.exit(0);
