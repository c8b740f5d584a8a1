// pyward mcp driven by real clients: the official TypeScript SDK (Client +
// StdioClientTransport, which validates structuredContent against each
// tool's outputSchema), the MCP Inspector's CLI, and a hand-written
// JSON-RPC session for what the SDK 1.x cannot send. Prints TAP.
// Environment (from mcp.sh): PYWARD, WS, BOX, VENV, XDG_RUNTIME_DIR, PYWARD_DATADIR.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn, execFile, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync, writeFileSync, openSync, closeSync, renameSync, symlinkSync, unlinkSync, rmSync, realpathSync } from 'node:fs';
import { userInfo } from 'node:os';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const PYWARD = env.PYWARD;
const EXPECTED_TOOLS = ['pyenv_discover', 'pyenv_create', 'pyenv_install', 'pyenv_uninstall', 'pyenv_remove',
  'python', 'execute_code', 'runtime_status', 'runtime_install', 'history', 'job_status'];

// ---------------------------------------------------------------- TAP
let n = 0;
let failed = 0;
function ok(cond, desc, diag) {
  n++;
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${desc}`);
  if (!cond) {
    failed++;
    if (diag !== undefined)
      for (const l of String(typeof diag === 'string' ? diag : JSON.stringify(diag)).split('\n').slice(0, 20))
        console.log(`#   ${l}`);
  }
}
const is = (got, want, desc) => ok(got === want, desc, `got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
async function rejects(promise, check, desc) {
  try {
    const r = await promise;
    ok(false, desc, `resolved: ${JSON.stringify(r).slice(0, 400)}`);
  } catch (e) {
    ok(check(e), desc, `${e && e.code} ${e && e.message}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function serverEnv(extra = {}) {
  const keep = ['PATH', 'HOME', 'LC_ALL', 'XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME',
    'PYWARD_SYSTEM_CONFIG', 'PYWARD_DATADIR', 'PYWARD_WORKER', 'PYWARD_LOCALEDIR', 'PYWARD_BASELINE'];
  const e = {};
  for (const k of keep) if (env[k] !== undefined) e[k] = env[k];
  return { ...e, ...extra };
}

async function sdkClient(args = [], name = 'pyward-test', capabilities = {}, extraEnv = {}) {
  const transport = new StdioClientTransport({
    command: PYWARD,
    args: ['--box-root', env.BOX, '-C', env.WS, ...args, 'mcp'],
    env: serverEnv(extraEnv),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name, version: '9.8.7' }, { capabilities });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

const structured = (r) => r.structuredContent;

// ---------------------------------------------------------------- the SDK
async function sdkSession() {
  const { client } = await sdkClient();
  is(client.getServerVersion()?.name, 'pyward', 'initialize: the server names itself pyward');
  const instructions = client.getInstructions() || '';
  ok(/instead of running `pip`/.test(instructions) && /scratchpad/.test(instructions),
    'initialize: the instructions steer agents away from pip in a shell and explain the scratchpad', instructions);
  const skill = readFileSync(path.join(here, '../../data/skills/python-env/SKILL.md'), 'utf8');
  ok(skill.includes(instructions.trim().split('\n')[0]), 'the instructions are the SKILL.md guidance');

  const { tools } = await client.listTools();
  is(tools.map((t) => t.name).join(' '), EXPECTED_TOOLS.join(' '), 'tools/list: the tools in their fixed order');
  ok(tools.every((t) => t.inputSchema?.type === 'object' && t.outputSchema?.type === 'object'),
    'every tool has an object inputSchema and outputSchema');
  ok(tools.every((t) => ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']
    .every((k) => typeof t.annotations?.[k] === 'boolean')), 'every tool has the four annotation hints');
  const again = await client.listTools();
  is(JSON.stringify(again.tools), JSON.stringify(tools), 'tools/list is the same, byte for byte, when asked again');

  const py = (code, extra = {}, opts) =>
    client.callTool({ name: 'python', arguments: { code, venv: env.VENV, ...extra } }, undefined, opts);
  let r = await py('x = 41');
  ok(!r.isError && structured(r).status === 'ok', 'python: a first cell runs', r);
  ok(structured(r).interpreter?.executable?.startsWith(env.VENV), 'python: a fresh worker names its interpreter', structured(r));
  r = await py('x + 1');
  is(structured(r).value, '42', 'python: state survives into the next call');
  is(JSON.stringify(JSON.parse(r.content[0].text)), JSON.stringify(structured(r)),
    'python: the text content is the same JSON as structuredContent');
  ok(/-mcp-\d+$/.test(structured(r).session), 'python: one session per connection, named from workspace and connection',
    structured(r).session);
  r = await py('1/0');
  ok(r.isError && structured(r).status === 'error' && /ZeroDivisionError/.test(structured(r).traceback),
    'python: an exception is a tool error carrying the traceback', r);

  await rejects(client.callTool({ name: 'python', arguments: { code: 5 } }),
    (e) => e.code === -32602 && /arguments\.code/.test(e.message), 'a wrong argument type is invalid params naming the field');
  await rejects(client.callTool({ name: 'python', arguments: { code: '1', bogus: 1 } }),
    (e) => e.code === -32602 && /arguments\.bogus/.test(e.message), 'an unknown argument is invalid params naming it');
  await rejects(client.callTool({ name: 'no_such_tool', arguments: {} }),
    (e) => e.code === -32602 && /unknown tool/.test(e.message), 'an unknown tool is invalid params');

  // cancellation: the SDK sends notifications/cancelled when the signal aborts
  const ac = new AbortController();
  const t0 = Date.now();
  const spin = py('while True: pass', {}, { signal: ac.signal, timeout: 60000 });
  setTimeout(() => ac.abort('test'), 800);
  await rejects(spin, () => true, 'python: a cancelled call returns at once (the client stops waiting)');
  r = await py('x');
  ok(Date.now() - t0 < 15000 && structured(r).value === '41',
    'python: after the cancel the cell was interrupted and the session kept its state', structured(r));

  // two sessions at once: a slow cell does not hold up another session. The slow one waits for a
  // file written only after the quick one answered (60 s at most), so "during" is a state, not a time.
  const gate = path.join(env.WS, 'slow-cell.gate');
  const slow = py(`import os, time\nfor _ in range(6000):\n    if os.path.exists(${JSON.stringify(gate)}): break\n`
    + '    time.sleep(0.01)\n"slow"', { session: 'mcp-test-a' });
  let slowEnded = false;
  slow.finally(() => { slowEnded = true; }).catch(() => {});
  const running = async () => /^mcp-test-a .*running/m.test((await pywardCli(['python', '--list'])).stdout);
  for (const end = Date.now() + 60000; Date.now() < end && !(await running());) await sleep(50);
  r = await py('"quick"', { session: 'mcp-test-b' });
  ok(!slowEnded && structured(r).value === "'quick'", 'requests run concurrently (another session answers during a slow cell)',
    { slowEnded, quick: structured(r) });
  writeFileSync(gate, '');
  r = await slow;
  is(structured(r).value, "'slow'", 'the slow cell finishes too');

  // a restarted host: the loss is said, not hidden
  const pid = Number(readFileSync(path.join(env.XDG_RUNTIME_DIR, 'pyward', 'host.pid'), 'utf8'));
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 1200; i++) { // until it is gone, 60 s at most
    try { process.kill(pid, 0); } catch { break; }
    await sleep(50);
  }
  r = await py('x');
  let notices = structured(r).notices || [];
  if (!notices.length) { r = await py('x'); notices = structured(r).notices || []; }
  ok(notices.length > 0 && (structured(r).status !== 'ok' || /NameError/.test(structured(r).traceback || '') || notices.length),
    'python: after the host restarts the result reports the lost state', structured(r));
  r = await py('y = 5; y * 2');
  is(structured(r).value, '10', 'python: the session works again after the loss');

  // an environment named by its name, then swapped for a link to one outside the workspace: the
  // next calls are refused (with reset, which starts a worker, and without), never run from a
  // check remembered from before the swap
  const inside = path.join(env.WS, 'swapenv');
  const outside = path.join(env.WS, '..', 'outside-swapenv');
  execFileSync(realpathSync(path.join(env.VENV, 'bin', 'python')), ['-m', 'venv', '--without-pip', inside]);
  r = await py('"in"', { venv: 'swapenv', session: 'mcp-swap' });
  r = await py('"in again"', { venv: 'swapenv', session: 'mcp-swap' });
  ok(structured(r).value === "'in again'", 'python: an environment named by its name runs, twice', structured(r));
  renameSync(inside, outside);
  symlinkSync(outside, inside);
  r = await py('"swapped"', { venv: 'swapenv', session: 'mcp-swap', reset: true });
  ok(r.isError && /symbolic link|outside/.test(structured(r).error?.message || ''),
    'python: the environment swapped for a link to one outside: refused with reset', structured(r));
  r = await py('"swapped"', { venv: 'swapenv', session: 'mcp-swap' });
  ok(r.isError && /symbolic link|outside/.test(structured(r).error?.message || ''),
    'python: and refused without reset', structured(r));
  unlinkSync(inside);
  renameSync(outside, inside);
  r = await py('"back"', { venv: 'swapenv', session: 'mcp-swap' });
  ok(structured(r).value === "'back'", 'python: the environment moved back runs again', structured(r));
  rmSync(inside, { recursive: true, force: true });
  await client.close();
}

// ---------------------------------------------------------------- runtime, consent
function pywardCli(args, box = env.BOX) {
  return new Promise((resolve) => {
    execFile(PYWARD, ['--box-root', box, '-C', env.WS, ...args], { env: serverEnv(), timeout: 60000 },
      (err, stdout, stderr) => resolve({ err, stdout, stderr }));
  });
}

async function runtimeSession() {
  // read-only mode: the change is listed but refused with the policy message
  let ro = await sdkClient(['--mode', 'read-only'], 'ro-agent');
  let { tools } = await ro.client.listTools();
  ok(tools.some((t) => t.name === 'runtime_install'), 'read-only mode: mutating tools stay listed');
  let r = await ro.client.callTool({ name: 'runtime_install', arguments: {} });
  ok(r.isError && structured(r).error.code === 'refused' && /read-only/.test(structured(r).error.message),
    'read-only mode: runtime_install is a tool error with the policy message', r);
  r = await ro.client.callTool({ name: 'runtime_status', arguments: {} });
  ok(!r.isError && structured(r).state === 'not-provisioned' && structured(r).pinned_version === env.RT_VER,
    'read-only mode: runtime_status works (not provisioned, the pinned version)', r);
  await ro.client.close();

  // a client that cannot ask the human: refused with what the human can do
  const mute = await sdkClient([], 'mute-agent');
  r = await mute.client.callTool({ name: 'execute_code', arguments: { code: 'print(1)' } });
  ok(r.isError && /not provisioned/.test(structured(r).error?.message || '') && /MB download/.test(structured(r).error.message)
    && /pyward runtime install/.test(structured(r).error.hint), 'execute_code without a runtime: says how the human installs it and how big it is', r);

  r = await mute.client.callTool({ name: 'runtime_install', arguments: {} });
  ok(r.isError && structured(r).error.code === 'refused' && /consent/.test(structured(r).error.message)
    && structured(r).error.message.includes(env.RT_SHA) && /pyward runtime install/.test(structured(r).error.hint)
    && /--allow-runtime-install/.test(structured(r).error.hint),
  'no elicitation: refused, showing the archive (SHA256) and the command the human can run', r);
  await mute.client.close();
  // the baseline goes under the same consent; baseline: false leaves it out
  const withBase = await sdkClient([], 'mute-agent', {}, { PYWARD_BASELINE: env.BASELINE_FILE });
  r = await withBase.client.callTool({ name: 'runtime_install', arguments: {} });
  ok(r.isError && /pwtest-alpha/.test(structured(r).error.message), 'runtime_install: the consent statement names the baseline', r);
  r = await withBase.client.callTool({ name: 'runtime_install', arguments: { baseline: false } });
  ok(r.isError && !/pwtest-alpha/.test(structured(r).error.message), 'runtime_install baseline: false: the statement leaves it out', r);
  await withBase.client.close();

  // elicitation: declined, then accepted
  let asked = [];
  let answer = 'decline';
  const polite = await sdkClient([], 'polite-agent', { elicitation: {} });
  polite.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return answer === 'accept' ? { action: 'accept', content: { install: true } } : { action: answer };
  });
  r = await polite.client.callTool({ name: 'runtime_install', arguments: {} });
  ok(asked.length === 1 && asked[0].message.includes(env.RT_SHA) && asked[0].message.includes('runtime/python'),
    'elicitation/create shows the consent: archive, SHA256, destination', asked[0]);
  ok(r.isError && structured(r).error.code === 'refused', 'declined: nothing is installed (a refusal)', r);
  r = await polite.client.callTool({ name: 'runtime_status', arguments: {} });
  is(structured(r).state, 'not-provisioned', 'declined: the runtime is still not provisioned');
  answer = 'accept';
  asked = [];
  const progress = [];
  r = await polite.client.callTool({ name: 'runtime_install', arguments: {} }, undefined,
    { onprogress: (p) => progress.push(p), timeout: 120000 });
  ok(!r.isError && structured(r).result === 'installed' && structured(r).version === env.RT_VER,
    'accepted: the runtime is installed', r);
  ok(progress.length >= 1 && progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
    'progress notifications arrived during the install, strictly increasing', progress);
  r = await polite.client.callTool({ name: 'runtime_status', arguments: {} });
  is(structured(r).state, 'installed', 'runtime_status: installed');
  r = await polite.client.callTool({ name: 'execute_code', arguments: { code: 'import sys; print(sys.prefix); print("e", file=sys.stderr)' } });
  ok(!r.isError && structured(r).status === 'exited' && structured(r).exit_code === 0 && /runtime\/python/.test(structured(r).stdout)
    && /e/.test(structured(r).stderr), 'execute_code runs once in the managed runtime, stdout and stderr captured', r);
  r = await polite.client.callTool({ name: 'execute_code', arguments: { code: 'import time; time.sleep(30)', timeout_s: 1 } });
  ok(r.isError && structured(r).status === 'timed-out', 'execute_code: the hard timeout stops it (a tool error)', r);
  r = await polite.client.callTool({ name: 'python', arguments: { code: 'import sys; sys.prefix' } });
  ok(!r.isError && /runtime\/python/.test(structured(r).value || ''), 'python without venv runs in the managed runtime', r);
  await polite.client.close();
  const h = await pywardCli(['--json', 'history', '--kind', 'runtime.install']);
  let ops = [];
  try { ops = JSON.parse(h.stdout).operations || []; } catch { /* reported below */ }
  ok(ops.some((o) => /mcp/.test(JSON.stringify(o)) && /polite-agent 9\.8\.7/.test(JSON.stringify(o))),
    'history records the install with the user and the agent (client name and version)', h.stdout.slice(0, 1500));
  ok(ops.some((o) => o.outcome === 'ok' && /\(consent: asked of the human through the client\)/.test(o.command || '')),
    'and that the consent was the human\'s, asked through the client', ops);

  // the operator's standing consent: a client that cannot ask installs, and the catalog says whose consent it was
  const box = `${env.BOX}-operator`;
  const transport = new StdioClientTransport({
    command: PYWARD, args: ['--box-root', box, '-C', env.WS, 'mcp', '--allow-runtime-install'], env: serverEnv(), stderr: 'pipe',
  });
  const op = new Client({ name: 'mute-agent', version: '9.8.7' }, { capabilities: {} });
  await op.connect(transport);
  r = await op.callTool({ name: 'runtime_install', arguments: {} }, undefined, { timeout: 120000 });
  ok(!r.isError && structured(r).result === 'installed' && structured(r).version === env.RT_VER,
    '--allow-runtime-install: a client that cannot ask installs on the operator\'s standing consent', r);
  await op.close();
  let opOps = [];
  try { opOps = JSON.parse((await pywardCli(['--json', 'history', '--kind', 'runtime.install'], box)).stdout).operations || []; } catch { /* below */ }
  ok(opOps.length === 1 && opOps[0].outcome === 'ok'
    && /\(consent: the operator's, pyward mcp --allow-runtime-install\)/.test(opOps[0].command || '')
    && /mute-agent 9\.8\.7/.test(opOps[0].command || ''),
  'the catalog records that install as the operator\'s consent, with the agent that asked', opOps);
}

// ---------------------------------------------------------------- environments
async function venvSession() {
  const { client } = await sdkClient([], 'venv-agent');
  const call = (name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts);
  let r = await call('pyenv_discover', {});
  ok(!r.isError && structured(r).environments.some((e) => e.path === env.VENV), 'pyenv_discover finds the workspace\'s .venv', r);
  r = await call('pyenv_create', { path: 'env2' });
  ok(!r.isError && structured(r).path === `${env.WS}/env2` && structured(r).existed === false, 'pyenv_create makes env2', r);
  r = await call('pyenv_create', { path: 'env2' });
  is(structured(r).existed, true, 'pyenv_create again: it existed, nothing to do');
  const progress = [];
  r = await call('pyenv_install', { packages: ['pwtest-alpha==1.0'], venv: 'env2', index: env.INDEX_OK },
    { onprogress: (p) => progress.push(p), timeout: 120000 });
  const att = structured(r).attempts || [];
  ok(!r.isError && structured(r).outcome === 'ok' && att.length === 1 && att[0].class === 'ok'
    && att[0].index_url === env.INDEX_OK && typeof att[0].duration_ms === 'number' && att[0].exit_code === 0,
  'pyenv_install: ok, the attempt with its index, class, exit code and duration', r);
  ok(progress.length >= 1, 'pyenv_install: progress notifications arrived (pip\'s lines)', progress.length);
  r = await call('python', { code: 'import pwtest_alpha; pwtest_alpha.VERSION', venv: 'env2' });
  is(structured(r).value, "'1.0'", 'the installed package imports in the python tool with that venv');
  r = await call('pyenv_install', { packages: ['pwtest-beta'], venv: 'env2', index: env.INDEX_STALL, timeout_ms: 3000 },
    { timeout: 120000 });
  ok(r.isError && structured(r).outcome === 'timed-out' && /time budget/.test(structured(r).stop_reason || ''),
    'pyenv_install: a budget stop is a tool error with the stop reason', r);
  r = await call('pyenv_install', { packages: ['--index-url=http://evil/'], venv: 'env2' });
  ok(r.isError && structured(r).error, 'pyenv_install: an option smuggled in as a package is refused', r);
  // background: a job id at once, then job_status follows it to its end
  const t0 = Date.now();
  r = await call('pyenv_install', { packages: ['pwtest-beta'], venv: 'env2', index: env.INDEX_OK, background: true });
  const jobId = structured(r).job_id;
  ok(!r.isError && Number.isInteger(jobId) && Date.now() - t0 < 10000, 'pyenv_install background: a job id at once', r);
  let js;
  for (let i = 0; i < 120; i++) {
    js = await call('job_status', { job_id: jobId });
    if (structured(js).job?.state !== 'running') break;
    await sleep(500);
  }
  ok(!js.isError && structured(js).job.state === 'ok' && structured(js).job.operations.some((o) => o.kind === 'venv.install'
    && o.attempts.length >= 1), 'job_status: the job finished ok, with its operation and attempts', js);
  r = await call('python', { code: 'import pwtest_beta; 1', venv: 'env2' });
  ok(!r.isError, 'the background install really installed the package', r);
  // the job and its operation are recorded as this call, by the agent, as a foreground call would be
  const jobOp = structured(js).job?.operations?.[0]?.id;
  const bh = await pywardCli(['--json', 'history', '--kind', 'venv.install', '--limit', '100']);
  let bop;
  try { bop = JSON.parse(bh.stdout).operations.find((o) => o.id === jobOp); } catch { /* reported below */ }
  const asCall = /^pyenv_install \{.*"background":true.*"packages":\["pwtest-beta"\].*\} \(mcp: venv-agent 9\.8\.7\)$/;
  ok(asCall.test(bop?.command || '') && bop.user === userInfo().username,
    'the background install\'s operation names the tool call and the agent (client name and version), by the server\'s user', bop);
  ok(asCall.test(structured(js).job?.command || '') && structured(js).job.user === userInfo().username,
    'the job itself records the same request and user', structured(js).job);
  r = await call('job_status', { job_id: 999999 });
  ok(r.isError && structured(r).error && structured(r).schema === 1 && Object.keys(structured(r))[0] === 'schema',
    'job_status of an unknown job is a tool error, the CLI --json error object (schema first)', r);
  r = await call('pyenv_uninstall', { packages: ['pwtest-alpha'], venv: 'env2' });
  ok(!r.isError && structured(r).outcome === 'ok', 'pyenv_uninstall: ok', r);
  r = await call('pyenv_remove', { venv: '../..' });
  ok(r.isError && structured(r).error, 'pyenv_remove: a path outside the workspace is refused', r);
  r = await call('pyenv_remove', { venv: 'env2' });
  ok(!r.isError && structured(r).removed === `${env.WS}/env2`, 'pyenv_remove: env2 removed', r);
  r = await call('pyenv_discover', {});
  ok(!structured(r).environments.some((e) => /env2$/.test(e.path)), 'pyenv_discover: env2 is gone');
  await rejects(call('pyenv_discover', { depth: 99 }), (e) => e.code === -32602 && /arguments\.depth/.test(e.message),
    'pyenv_discover: depth out of range is invalid params naming the field');
  await client.close();
  const ro = await sdkClient(['--mode', 'read-only'], 'ro-agent');
  r = await ro.client.callTool({ name: 'pyenv_create', arguments: { path: 'env3' } });
  ok(r.isError && /read-only/.test(structured(r).error?.message || ''), 'read-only mode: pyenv_create refused with the policy message', r);
  r = await ro.client.callTool({ name: 'pyenv_install', arguments: { packages: ['pwtest-alpha'] } });
  ok(r.isError && /read-only/.test(structured(r).error?.message || ''), 'read-only mode: pyenv_install refused', r);
  r = await ro.client.callTool({ name: 'pyenv_discover', arguments: {} });
  ok(!r.isError, 'read-only mode: pyenv_discover works');
  await ro.client.close();
  const h = await pywardCli(['--json', 'history', '--kind', 'venv.install']);
  ok(/venv-agent 9\.8\.7/.test(h.stdout), 'history records the installs with the agent', h.stdout.slice(0, 800));
  const hist = await sdkClient(['--mode', 'read-only'], 'auditor');
  r = await hist.client.callTool({ name: 'history', arguments: { kind: 'venv.', limit: 100 } });
  let cli = [];
  try { cli = JSON.parse((await pywardCli(['--json', 'history', '--kind', 'venv.', '--limit', '100'])).stdout).operations; } catch { /* below */ }
  ok(!r.isError && structured(r).operations.length > 0 && JSON.stringify(structured(r).operations) === JSON.stringify(cli),
    'history (read-only mode): the same operations as pyward history --json', r);
  ok(structured(r).operations.every((o) => o.kind.startsWith('venv.')), 'history: the kind filter applies');
  r = await hist.client.callTool({ name: 'history', arguments: { since: 'yesterday' } });
  ok(r.isError && /not a date/.test(structured(r).error?.message || ''), 'history: a bad since is a tool error saying what a date looks like');
  await hist.client.close();
}

// ------------------------------------------- the attempt chain and the lock
// The server's own settings decide the chain, as for the CLI: a default
// index that refuses (a closed port), then the mirror; and two installs
// sent at once into one environment take turns on its lock.
async function chainSession() {
  const { client } = await sdkClient([], 'chain-agent', {}, {
    PIP_INDEX_URL: `http://127.0.0.1:${env.DEAD_PORT}/simple/`, PYWARD_MIRRORS: env.INDEX_OK,
    PYWARD_PROXY_PORTS: env.DEAD_PORT,
  });
  const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  let r = await call('pyenv_create', { path: 'env4' });
  ok(!r.isError, 'pyenv_create makes env4', r);
  const progress = [];
  r = await client.callTool({ name: 'pyenv_install', arguments: { packages: ['pwtest-alpha==1.0'], venv: 'env4' } },
    undefined, { timeout: 120000, onprogress: (p) => progress.push(p) });
  const att = structured(r).attempts || [];
  ok(!r.isError && att.length === 2 && att[0].class === 'network' && att[0].index_url === `http://127.0.0.1:${env.DEAD_PORT}/simple/`
    && att[0].exit_code !== 0 && att[1].class === 'ok' && att[1].index_url === env.INDEX_OK && att[1].exit_code === 0
    && att.every((a) => typeof a.duration_ms === 'number' && 'proxy' in a),
  'pyenv_install: a refused default index falls back to the mirror, both attempts listed (index, proxy, exit code, class, duration)', r);
  const said = progress.map((p) => p.message || '');
  ok(said.some((m) => /^attempt 1: .*127\.0\.0\.1:\d+\/simple\//.test(m)) && said.some((m) => m.startsWith('attempt 2: ') && m.includes(env.INDEX_OK))
    && progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
  'its progress says which attempt of the chain runs (attempt 2 against the mirror too, not hidden by pip\'s lines), strictly increasing', said);
  const told = [];
  const withProgress = (args) => client.callTool({ name: 'pyenv_install', arguments: args }, undefined,
    { timeout: 120000, onprogress: (p) => told.push(p.message || '') });
  const [a, b] = await Promise.all([
    withProgress({ packages: ['pwtest-beta'], venv: 'env4', index: env.INDEX_OK }),
    withProgress({ packages: ['pwtest-alpha==1.0'], venv: 'env4', index: env.INDEX_OK, upgrade: true }),
  ]);
  ok(!a.isError && !b.isError && structured(a).outcome === 'ok' && structured(b).outcome === 'ok',
    'two installs sent at once into one environment both succeed', [a, b]);
  // their pip runs, read back from the catalog, did not overlap
  let ops = [];
  try {
    ops = JSON.parse((await pywardCli(['--json', 'history', '--kind', 'venv.install', '--target', 'env4', '--limit', '2'])).stdout).operations;
  } catch { /* below */ }
  const spans = [];
  for (const o of ops) {
    let full;
    try { full = JSON.parse((await pywardCli(['--json', 'history', 'show', String(o.id)])).stdout).operation; } catch { /* below */ }
    for (const t of full?.attempts || []) {
      const start = Date.parse(t.started_at);
      spans.push([o.id, start, start + t.duration_ms]);
    }
  }
  const overlap = spans.some((x) => spans.some((y) => x[0] < y[0] && x[1] < y[2] && y[1] < x[2]));
  ok(ops.length === 2 && spans.length >= 2 && !overlap,
    'their pip runs took turns on the environment\'s lock (no two attempts overlap in the catalog)', spans);
  ok(told.some((m) => /^waiting for .*env4: it is locked by /.test(m)),
    'the one that waited was told so in its progress (waiting for env4: it is locked by ...)', told);
  r = await call('python', { code: 'import pwtest_alpha, pwtest_beta; 1', venv: 'env4' });
  ok(!r.isError, 'both packages are there', r);
  await client.close();
}

// ---------------------------------------------------------------- the Inspector
function inspector(args) {
  const bin = path.join(here, 'node_modules', '.bin', 'mcp-inspector');
  const e = serverEnv();
  const envArgs = Object.entries({ XDG_RUNTIME_DIR: e.XDG_RUNTIME_DIR, PYWARD_DATADIR: e.PYWARD_DATADIR,
    PYWARD_SYSTEM_CONFIG: e.PYWARD_SYSTEM_CONFIG, XDG_CONFIG_HOME: e.XDG_CONFIG_HOME })
    .filter(([, v]) => v !== undefined).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  return new Promise((resolve) => {
    execFile(bin, ['--cli', ...envArgs, PYWARD, '--box-root', env.BOX, '-C', env.WS, 'mcp', ...args],
      { timeout: 90000, env: { ...env }, cwd: env.WS }, (err, stdout, stderr) => resolve({ err, stdout, stderr }));
  });
}

async function inspectorSession() {
  let r = await inspector(['--method', 'tools/list']);
  let names = [];
  try { names = JSON.parse(r.stdout).tools.map((t) => t.name); } catch { /* reported below */ }
  is(names.join(' '), EXPECTED_TOOLS.join(' '), 'Inspector CLI: tools/list lists the tools');
  r = await inspector(['--method', 'tools/call', '--tool-name', 'python', '--tool-arg', 'code=6*7',
    '--tool-arg', `venv=${env.VENV}`]);
  let value;
  try { value = JSON.parse(r.stdout).structuredContent.value; } catch { value = r.stdout + r.stderr; }
  is(value, '42', 'Inspector CLI: tools/call runs python');
}

// ---------------------------------------------------------------- by hand
class Raw {
  constructor(args = []) {
    this.proc = spawn(PYWARD, ['--box-root', env.BOX, '-C', env.WS, 'mcp', ...args],
      { env: serverEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    this.lines = [];
    this.bad = [];
    this.waiters = [];
    this.stderr = '';
    this.exited = new Promise((resolve) => this.proc.on('close', (code, sig) => resolve(sig || code)));
    this.proc.stderr.on('data', (d) => { this.stderr += d; });
    createInterface({ input: this.proc.stdout }).on('line', (line) => {
      let msg;
      try { msg = JSON.parse(line); } catch { this.bad.push(line); return; }
      this.lines.push(msg);
      this.waiters = this.waiters.filter((w) => !w(msg));
    });
  }
  send(obj) { this.proc.stdin.write((typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n'); }
  next(match, ms = 20000) {
    const found = this.lines.find(match);
    if (found) { this.lines.splice(this.lines.indexOf(found), 1); return Promise.resolve(found); }
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), ms);
      this.waiters.push((m) => {
        if (!match(m)) return false;
        clearTimeout(timer);
        this.lines.splice(this.lines.indexOf(m), 1);
        resolve(m);
        return true;
      });
    });
  }
  call(id, method, params) {
    this.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
    return this.next((m) => !Array.isArray(m) && m.id === id);
  }
  close() {
    this.proc.stdin.end();
    return this.exited;
  }
}

const MODERN = '2026-07-28';
const meta = (extra = {}) => ({ _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, ...extra } });

async function rawSession() {
  const s = new Raw(['--max-message', '4096']);
  let m = await s.call(1, 'server/discover', meta());
  ok(m?.result?.supportedVersions?.includes(MODERN) && m.result.supportedVersions.includes('2025-03-26'),
    'server/discover (2026-07-28) lists every revision served', m);
  ok(m?.result?.resultType === 'complete' && m.result._meta?.['io.modelcontextprotocol/serverInfo']?.name === 'pyward'
    && typeof m.result.ttlMs === 'number' && m.result.capabilities?.tools,
  'server/discover: resultType, serverInfo in _meta, ttlMs and capabilities', m);
  ok(/pip/.test(m?.result?.instructions || ''), 'server/discover carries the instructions');
  m = await s.call(2, 'tools/list', meta());
  is(m?.result?.tools?.map((t) => t.name).join(' '), EXPECTED_TOOLS.join(' '), 'tools/list with _meta only, no initialize (stateless)');
  ok(m?.result?.cacheScope && m.result.resultType === 'complete', 'tools/list (2026-07-28) is a cacheable result', m?.result && Object.keys(m.result));
  m = await s.call(3, 'tools/call', { name: 'python', arguments: { code: '2**10', venv: env.VENV }, ...meta() });
  ok(m?.result?.structuredContent?.value === '1024' && m.result.resultType === 'complete',
    'tools/call with _meta runs a tool statelessly', m);
  m = await s.call(4, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '1900-01-01',
    'io.modelcontextprotocol/clientCapabilities': {} } });
  ok(m?.error?.code === -32022 && m.error.data?.requested === '1900-01-01' && m.error.data.supported.includes(MODERN),
    'an unknown version in _meta: UnsupportedProtocolVersion with the supported list', m);
  m = await s.call(5, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } });
  is(m?.error?.code, -32602, 'a stateless request without clientCapabilities is invalid params');
  m = await s.call(6, 'tools/list');
  is(m?.error?.code, -32600, 'a legacy request before initialize is refused with a reason');
  m = await s.call(7, 'no/such/method', meta());
  is(m?.error?.code, -32601, 'an unknown method: method not found');
  s.send('{"jsonrpc": "2.0", "id": 8, "method": ');
  m = await s.next((x) => x.error?.code === -32700);
  ok(m && m.id === null, 'malformed JSON: a parse error with a null id', m);
  s.send([{ jsonrpc: '2.0', id: 9, method: 'ping' }]);
  m = await s.next((x) => !Array.isArray(x) && x.error?.code === -32600 && x.id === null);
  ok(/2025-03-26/.test(m?.error?.message || ''), 'a batch outside 2025-03-26 is refused, naming the revision that has them', m);
  s.send('{"jsonrpc":"2.0","id":10,"method":"ping","params":{"pad":"' + 'x'.repeat(200000) + '"}}');
  m = await s.next((x) => x.error?.code === -32600 && /limit/.test(x.error.message));
  ok(m && m.id === null && /4096/.test(m.error.message), 'a line over --max-message is refused, naming the limit', m);
  m = await s.call(11, 'ping', meta());
  ok(m?.result?.resultType === 'complete', 'the server reads on after the over-long line');
  s.send({ jsonrpc: '2.0', id: 12, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {},
    clientInfo: { name: 'raw-legacy', version: '1' } } });
  m = await s.next((x) => x.id === 12);
  is(m?.result?.protocolVersion, '2025-03-26', 'initialize: 2025-03-26 is answered as asked');
  ok(m?.result && !('title' in m.result.serverInfo), 'initialize 2025-03-26: serverInfo without the later title');
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  s.send([{ jsonrpc: '2.0', id: 13, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/whatever' },
    { jsonrpc: '2.0', id: 14, method: 'tools/list' }, { jsonrpc: '2.0', id: 15, method: 'nope' }]);
  m = await s.next((x) => Array.isArray(x));
  ok(Array.isArray(m) && m.length === 3 && [13, 14, 15].every((id) => m.some((x) => x.id === id)),
    'a 2025-03-26 batch: one array with a response per request, none for the notification', m);
  const listed = Array.isArray(m) ? m.find((x) => x.id === 14) : undefined;
  ok(listed && listed.result.tools.every((t) => !('outputSchema' in t)),
    'tools/list for 2025-03-26 leaves out outputSchema (added in 2025-06-18)');
  s.send('[]');
  m = await s.next((x) => !Array.isArray(x) && x.error?.code === -32600 && /empty/.test(x.error.message));
  ok(m, 'an empty batch is an invalid request');
  s.send('"just a string"');
  m = await s.next((x) => x.error?.code === -32600 && /object/.test(x.error.message));
  ok(m, 'a message that is not an object is an invalid request');
  const code = await s.close();
  is(code, 0, 'the server exits 0 when stdin closes');
  is(s.bad.length, 0, 'every line on stdout was a JSON message');
  ok(/session 2025-03-26 with raw-legacy/.test(s.stderr), 'logs go to stderr', s.stderr);

  // a last message without its newline, then end of input (found by fuzz/fuzz_mcp_message.c: the
  // reader stepped past the end of its buffer and the server died of SIGSEGV)
  const last = new Raw();
  last.proc.stdin.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: meta() }));
  m = await last.next((x) => x.id === 1);
  const lastCode = await last.exited;
  ok(m?.result && lastCode === 0, 'a last line without a newline is answered, and the server exits 0', `${JSON.stringify(m)} ${lastCode}`);

  // a 64 MiB line against the default 4 MiB limit: refused without being held in memory
  const big = new Raw();
  const chunk = 'x'.repeat(1024 * 1024);
  big.proc.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
  for (let i = 0; i < 64; i++)
    if (!big.proc.stdin.write(chunk)) await new Promise((r) => big.proc.stdin.once('drain', r));
  big.proc.stdin.write('"}}\n');
  m = await big.next((x) => x.error?.code === -32600, 60000);
  const hwm = Number((readFileSync(`/proc/${big.proc.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/) || [])[1]);
  ok(m && /67108\d\d\d bytes refused/.test(m.error.message) && hwm > 0 && hwm < 32 * 1024,
    `a 64 MiB line is refused while the server's peak memory stays small (VmHWM ${hwm} kB)`, m);
  m = await big.call(2, 'ping', meta());
  ok(m?.result, 'the server answers the next message after it');
  await big.close();

  // 2026-07-28 consent: an input_required result carries the elicitation; the retry carries the answer
  const u = new Raw(['--box-root', `${env.BOX}-modern`]);
  const elicitMeta = meta({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } });
  m = await u.call(1, 'tools/call', { name: 'runtime_install', arguments: {}, ...elicitMeta });
  const ask = m?.result?.inputRequests?.consent;
  ok(m?.result?.resultType === 'input_required' && ask?.method === 'elicitation/create'
    && ask.params.message.includes(env.RT_SHA) && typeof m.result.requestState === 'string',
  'runtime_install (2026-07-28): input_required with the consent as an elicitation and a requestState', m);
  const state = m?.result?.requestState || '';
  m = await u.call(2, 'tools/call', { name: 'runtime_install', arguments: {}, ...elicitMeta,
    inputResponses: { consent: { action: 'decline' } }, requestState: state });
  ok(m?.result?.isError && m.result.structuredContent?.error?.code === 'refused', 'the retry with decline: refused', m);
  const forged = state.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
  m = await u.call(3, 'tools/call', { name: 'runtime_install', arguments: {}, ...elicitMeta,
    inputResponses: { consent: { action: 'accept', content: { install: true } } }, requestState: forged });
  is(m?.result?.resultType, 'input_required', 'an accept with a forged requestState is not consent (asked again)');
  m = await u.call(4, 'tools/call', { name: 'runtime_install', arguments: {}, ...meta() });
  ok(m?.result?.isError && /cannot ask/.test(m.result.structuredContent?.error?.message || ''),
    'without the elicitation capability in this request: refused, no input request sent', m);
  m = await u.call(5, 'tools/call', { name: 'runtime_install', arguments: {}, ...elicitMeta,
    inputResponses: { consent: { action: 'accept', content: { install: true } } }, requestState: state });
  ok(!m?.result?.isError && m?.result?.structuredContent?.result === 'installed' && m.result.resultType === 'complete',
    'the retry with accept and the server\'s requestState installs', m);
  await u.close();
  // the catalog: a question (input_required, also after a forged state) is no operation; the
  // human's decline and the client that could not ask are refusals; the accepted retry is the install
  const mh = await pywardCli(['--json', 'history', '--kind', 'runtime.install'], `${env.BOX}-modern`);
  let mops = [];
  try { mops = JSON.parse(mh.stdout).operations || []; } catch { /* reported below */ }
  mops.sort((a, b) => a.id - b.id);
  is(mops.map((o) => o.outcome).join(' '), 'refused refused ok',
    'catalog after the 2026-07-28 rounds: the decline, the client that could not ask, the install; no row for a question');
  ok(/consent was not given/.test(mops[0]?.stop_reason || '') && /cannot ask a human/.test(mops[1]?.stop_reason || '')
    && /cannot ask a human/.test(mops[1]?.command || '') && /asked of the human/.test(mops[2]?.command || ''),
    'catalog: each refusal says why (declined; the client could not ask)', mops);

  // one write carrying a slow call, a ping, a second call and half a line: the ping is answered while
  // the call runs, the calls in order; the half line waits without the server spinning on it
  const pl = new Raw();
  const py = (id, code) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
    params: { name: 'python', arguments: { code, venv: env.VENV }, ...meta() } });
  await pl.call(1, 'tools/call', JSON.parse(py(1, '0')).params);
  pl.proc.stdin.write(`${py(2, 'import time; time.sleep(0.6); 5')}\n${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: meta() })}\n`
    + `${py(4, '6')}\n{"jsonrpc":"2.0","id":5,"meth`);
  const order = [];
  const seen = [2, 3, 4].map((id) => pl.next((x) => x.id === id).then((x) => { order.push(id); return x; }));
  await sleep(200);
  const ticks = () => readFileSync(`/proc/${pl.proc.pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13)
    .reduce((a, b) => a + Number(b), 0);
  const before = ticks();
  await sleep(1000);
  const spent = ticks() - before;
  pl.proc.stdin.write(`od":"ping",${JSON.stringify({ params: meta() }).slice(1)}\n`);
  const [r2, r3, r4] = await Promise.all(seen);
  m = await pl.next((x) => x.id === 5);
  ok(r3?.result && order[0] === 3 && r2?.result?.structuredContent?.value === '5' && r4?.result?.structuredContent?.value === '6'
    && r2?.result?.structuredContent?.execution < r4?.result?.structuredContent?.execution,
    'lines read together behind a call: the ping is answered first, the cells run in the order the calls came', [order, r2?.result?.structuredContent?.execution, r4?.result?.structuredContent?.execution]);
  ok(m?.result && spent < 20, `half a line waits for the rest, and the server rests meanwhile (${spent} ticks in 1 s)`, m);
  await pl.close();

  // stdin from a regular file and from /dev/null (which epoll cannot watch): read through a pipe
  const reqFile = path.join(env.WS, '..', 'mcp-requests.jsonl');
  writeFileSync(reqFile, `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: meta() })}\n`
    + `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: meta() })}\n`);
  for (const [what, file] of [['a regular file', reqFile], ['/dev/null', '/dev/null']]) {
    const fd = openSync(file, 'r');
    const child = spawn(PYWARD, ['--box-root', env.BOX, '-C', env.WS, 'mcp'], { env: serverEnv(), stdio: [fd, 'pipe', 'pipe'] });
    closeSync(fd);
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const code = await new Promise((resolve) => child.on('close', (c, sig) => resolve(sig || c)));
    const ids = out.split('\n').filter(Boolean).map((l) => JSON.parse(l).id).join(' ');
    is(`${code} ${ids}`, file === '/dev/null' ? '0 ' : '0 1 2', `stdin from ${what}: every line answered, exit 0`);
  }

  // 2025-11-25 legacy session: an initialize answered with the newest legacy revision
  const t = new Raw();
  m = await t.call(1, 'initialize', { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 'x', version: '1' } });
  is(m?.result?.protocolVersion, '2025-11-25', 'initialize with an unknown version is answered with the newest legacy one');
  m = await t.call(2, 'initialize', { protocolVersion: '2025-06-18', capabilities: {} });
  is(m?.error?.code, -32600, 'a second initialize is refused');

  // the fast path (src/mcp/fastcall.c reads a plain python call without jansson) answers as the jansson
  // path does; an empty _meta sends the same call through jansson
  const scanned = (id, args) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"python","arguments":${JSON.stringify(args)}}}`;
  const parsed = (id, args) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"python","arguments":${JSON.stringify(args)},"_meta":{}}}`;
  const answer = async (line, id) => { t.send(line); return t.next((x) => x.id === id); };
  const shape = (r) => {
    const c = { ...(r?.result?.structuredContent || {}) };
    for (const k of ['execution', 'duration_ms', 'interpreter']) delete c[k];
    return JSON.stringify([Object.keys(r || {}), Object.keys(r?.result || {}), c, r?.result?.isError]);
  };
  const f1 = await answer(scanned(3, { code: 'x = 6 * 7\nx', venv: env.VENV }), 3);
  const j1 = await answer(parsed(4, { code: 'x', venv: env.VENV }), 4);
  ok(f1?.result?.structuredContent?.value === '42' && shape(f1) === shape(j1)
    && j1.result.structuredContent.execution === f1.result.structuredContent.execution + 1,
  'a python call read by the fast path and one read by jansson: the same answer, one session', [f1, j1]);
  const f2 = await answer(scanned(5, { code: '1', session: 'bad name!' }), 5);
  const j2 = await answer(parsed(6, { code: '1', session: 'bad name!' }), 6);
  ok(f2?.result?.isError && /session name/.test(f2.result.structuredContent?.error?.message || '') && shape(f2) === shape(j2),
    'a refused session name: the same tool error from both paths', [f2, j2]);
  t.send(`{"jsonrpc":"2.0","id":"a\\"b\\u00e9","method":"tools/call","params":{"name":"python","arguments":{"code":"-7","venv":${JSON.stringify(env.VENV)}}}}`);
  m = await t.next((x) => x.id === 'a"b\u00e9');
  is(m?.result?.structuredContent?.value, '-7', 'a string id with escapes, read by the fast path, is answered with the same id');
  t.send(scanned(-9, { code: 'import time; time.sleep(0.5); 1', venv: env.VENV }));
  t.send(scanned(-9, { code: '2', venv: env.VENV }));
  const busy = await t.next((x) => x.id === -9 && x.error);
  m = await t.next((x) => x.id === -9 && x.result);
  ok(busy?.error?.code === -32600 && /still running/.test(busy.error.message) && m?.result?.structuredContent?.value === '1',
    'a second call with the id of one still running is refused on the fast path too, the first answered', [busy, m]);
  // A leased cell's answer leaves as soon as the worker replied, before the
  // call has ended: a client may use the id again at once and is not refused.
  let reused = 0, refusedReuse = null;
  for (let i = 0; i < 300; i++) {
    t.send(scanned(77, { code: String(i), venv: env.VENV }));
    const r = await t.next((x) => x.id === 77);
    if (r?.result?.structuredContent?.value === String(i)) reused++;
    else if (!refusedReuse) refusedReuse = r;
  }
  is(reused, 300, 'an id used again as soon as its answer came (300 times in a row) is never refused', refusedReuse);
  // Answers written before the reply is decoded: each text content is its
  // structuredContent, for values, output and tracebacks that need escaping.
  const cells = [
    ['"q\\"\\\\\\t"', (sc) => sc.value === '\'q"\\\\\\t\''],
    ['print("a\\"b\\tc\\\\"); None', (sc) => sc.value === null && sc.stdout === 'a"b\tc\\\n'],
    ['import sys; sys.stderr.write("e\\n"); raise ValueError("bad \\"x\\"")', (sc) => sc.status === 'error'
      && sc.stderr === 'e\n' && /ValueError: bad "x"/.test(sc.traceback)],
    ['"\u00e9\u2028"', (sc) => sc.value === "'\u00e9\\u2028'"], // a \u escape: decoded first
  ];
  let same = 0, bad = null;
  for (const [code, check] of cells) {
    t.send(scanned(78, { code, venv: env.VENV }));
    const r = await t.next((x) => x.id === 78);
    const sc = r?.result?.structuredContent;
    let text = null;
    try { text = JSON.parse(r?.result?.content?.[0]?.text); } catch (e) { text = e.message; }
    if (sc && check(sc) && JSON.stringify(text) === JSON.stringify(sc) && !!r.result.isError === (sc.status !== 'ok')) same++;
    else if (!bad) bad = [code, r];
  }
  is(same, cells.length, 'python answers with quotes, tabs, backslashes, output and a traceback: text and structuredContent agree', bad);
  // Calls sent one by one to the leased session while its first one runs
  // (until a gate file is written): each waits its turn, they run in the
  // order sent, and a ping sent behind them is answered before the gate
  // opens, so every wait handed the reading over.
  const qgate = path.join(env.WS, 'queue.gate');
  t.send(scanned(80, { code: `import os, time\nfor _ in range(6000):\n    if os.path.exists(${JSON.stringify(qgate)}): break\n`
    + '    time.sleep(0.01)\n0', venv: env.VENV }));
  for (let i = 1; i < 5; i++) {
    await sleep(50); // read one by one, mostly: the watched call hands over
    t.send(scanned(80 + i, { code: String(i), venv: env.VENV }));
  }
  t.send({ jsonrpc: '2.0', id: 85, method: 'ping' });
  const pong = await t.next((x) => x.id === 85, 10000);
  const early = t.lines.filter((x) => x.id >= 80 && x.id <= 84).length;
  writeFileSync(qgate, '');
  const ran = [];
  for (let i = 0; i < 5; i++) {
    const r = await t.next((x) => x.id === 80 + i);
    ran.push([r?.result?.structuredContent?.value, r?.result?.structuredContent?.execution]);
  }
  const execs = ran.map((o) => o[1]);
  ok(pong?.result && early === 0 && ran.every((o, i) => o[0] === String(i))
    && execs.every((e, i) => i === 0 || e === execs[i - 1] + 1),
  'calls sent one by one to a session while its first runs: a ping behind them is answered meanwhile, and they run in the order sent',
  { pong, early, ran });
  // SIGTERM while a leased cell runs (no second thread reads then: the
  // call's own thread watches the input): the call is cancelled and the
  // server ends at once, not when the 30 s cell would.
  t.send(scanned(79, { code: 'import time; time.sleep(30); 1', venv: env.VENV }));
  await sleep(500);
  const termAt = Date.now();
  t.proc.kill('SIGTERM');
  const how = await Promise.race([t.exited, sleep(15000).then(() => 'still running')]);
  const tookMs = Date.now() - termAt;
  ok(how !== 'still running' && tookMs < 10000, 'SIGTERM during a leased cell: the server ends within 10 s', { how, tookMs });
  if (how === 'still running') t.proc.kill('SIGKILL');
}

const timed = async (name, fn) => {
  const t = Date.now();
  await fn();
  console.log(`# ${name}: ${Date.now() - t} ms`);
};
try {
  await timed('SDK', sdkSession);
  await timed('runtime', runtimeSession);
  await timed('environments', venvSession);
  await timed('chain and lock', chainSession);
  await timed('Inspector', inspectorSession);
  await timed('by hand', rawSession);
} catch (e) {
  ok(false, 'the test script ran to its end', e && e.stack);
}
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
