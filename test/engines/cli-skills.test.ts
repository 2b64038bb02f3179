// Skills where each CLI reads them, over HTTP with the real CLI from npm in the session's jail and
// the fake provider behind the gateway (test/helpers/cli-engines.ts cases). A skill uploaded and
// attached to the agent is placed at provision in the CLI's own skills folder under its
// per-session home (engine-home.ts), not in /workspace/.skills; the CLI lists it (name and
// description) in its first model request by itself; a shell call reads its SKILL.md there and the
// model gets the body. The control: the same agent's next session with that folder removed before
// the turn sends no trace of the skill, so the listing came from the folder, not from our prompt.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLI_ENGINE_CASES, startCliEngineServer } from '../helpers/cli-engines.js';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { history, readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { engineHome } from '../../src/engines/cli/core/engine-home.js';
import { config } from '../../src/config.js';

const SKILL = 'zebra-facts';
// In the description (what a CLI lists) and only in the body (what reading SKILL.md gives).
const DESCRIPTION_MARK = 'ZDESC-5521';
const BODY_MARK = 'ZBODY-7731';
const SKILL_MD = `---\nname: ${SKILL}\ndescription: Knows how many zebras live in the park (${DESCRIPTION_MARK}). Use when asked about zebras.\n---\n\n# Zebra facts\n\nThe park has ${BODY_MARK} zebras.\n`;

describe.each(CLI_ENGINE_CASES)("$agentType reads the session's skills from its own skills folder", (c) => {
  let s: TestServer;
  let fake: FakeProvider;
  const folder = engineAdapter(c.agentType)!.skillsDir(engineHome(c.agentType))!;
  const onHost = (sessionId: string, p: string) => path.join(config().dataDir, 'sandboxes', sessionId, 'workspace', path.posix.relative('/workspace', p));

  beforeAll(async () => {
    ({ s, fake } = await startCliEngineServer(c.agentType));
  }, 900_000);
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it("the skill is placed in the CLI's folder, listed by the CLI, and its SKILL.md read from there; without the folder the CLI knows nothing of it", async () => {
    const created = await s.api('POST', '/skills', { body: { files: [{ path: 'SKILL.md', content: SKILL_MD }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const agentBody = { agentType: c.agentType, llm: c.llm, skills: [{ type: 'skill', skillId: created.body.skill.id }] };
    const { agent, session } = await readySession(s, agentBody);

    // Placed under the CLI's home; the user's workspace gets no .skills folder.
    const skillMd = `${folder}/${SKILL}/SKILL.md`;
    expect(fs.readFileSync(onHost(session.id, skillMd), 'utf8')).toBe(SKILL_MD);
    expect(fs.existsSync(onHost(session.id, '/workspace/.skills'))).toBe(false);

    fake.enqueue(c.shellStep(`cat ${skillMd}`, 'Reading the skill.'), { kind: 'text', text: 'The park has its zebras.' });
    await sendText(s, session.id, 'how many zebras are in the park?');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 180_000);
    expect(events.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
    // The CLI listed the skill in its first request (name and description, not the body).
    const first = JSON.stringify(fake.requests[0]!.body);
    expect(first.includes(SKILL), 'the CLI listed the skill by name').toBe(true);
    expect(first.includes(DESCRIPTION_MARK), "the CLI listed the skill's description").toBe(true);
    expect(first.includes(BODY_MARK), 'the body is read on demand, not listed').toBe(false);
    // Its shell read SKILL.md in the folder: the result holds the body, and the model got it.
    const result = (await history(s, session.id)).find((e) => e.type === 'agent.tool_result');
    expect(result?.part, JSON.stringify(events.slice(-6))).toMatchObject({
      status: 'ok',
      result: { exit_code: 0, output: expect.stringContaining(BODY_MARK) },
    });
    expect(JSON.stringify(fake.requests[1]!.body).includes(BODY_MARK), "the model got SKILL.md's body").toBe(true);

    // Control: the folder removed before the turn, nothing of the skill reaches the model.
    fake.reset();
    const other = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session.id as string;
    await waitFor(async () => (await s.api('GET', `/sessions/${other}`)).body.session.status !== 'provisioning');
    const otherSkill = onHost(other, `${folder}/${SKILL}`);
    expect(fs.existsSync(path.join(otherSkill, 'SKILL.md'))).toBe(true);
    fs.rmSync(otherSkill, { recursive: true });
    fake.enqueue({ kind: 'text', text: 'I know nothing of zebras.' });
    await sendText(s, other, 'how many zebras are in the park?');
    const controlEvents = await waitForEvents(s, other, 'session.status_idle', 1, 180_000);
    expect(controlEvents.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
    const control = JSON.stringify(fake.requests.map((r) => r.body));
    expect(control.includes(DESCRIPTION_MARK), "the skill's description reached the model without its folder").toBe(false);
    expect(control.includes(SKILL), "the skill's name reached the model without its folder").toBe(false);
  }, 400_000);
});
