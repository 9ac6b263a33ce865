import { spawnSync } from 'node:child_process';
import SQLite from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type NodeProcess, ROOT, startNodeProcess, startServiceProcess, TSX } from '../server/test/service-process.js';
import { createHmac } from 'node:crypto';
import { Relay } from './relay.js';
import { startTranscriptionServer } from '../server/test/transcription-server.js';
import { startSpeechServer } from '../server/test/speech-server.js';

/** What the stack's speech recogniser hears in any utterance of half a second or more (README, Voice in every browser). */
export const HEARD = 'When is breakfast?';

/** A turn as the hotel's hook received it. */
export interface HookedTurn {
  conversation_id: string;
  turn_id: string;
  reply_url: string;
}

export const TOKEN_TTL_S = 65;

/**
 * The service and the demo hotel, each in its own process on a free port, over a fresh SQLite store.
 * Browsers reach the service through a {@link Relay}, which tests use to break the network.
 */
export class Stack {
  private constructor(
    private service: NodeProcess,
    private readonly demo: NodeProcess,
    readonly relay: Relay,
    private readonly dataDir: string,
    readonly serviceUrl: string,
    readonly demoUrl: string,
    readonly apiKey: string,
    readonly deploymentId: string,
    private readonly signingSecret: string,
    /** The one-time console welcome of the hotel's own console user (`reception@harbor.example`). */
    readonly receptionWelcome: string,
    /** The service's speech recogniser, with every upload it received. */
    readonly transcriber: Awaited<ReturnType<typeof startTranscriptionServer>>,
    /** The service's synthesiser (README, The agent's own voice), with every sentence it was asked to say. */
    readonly synthesiser: Awaited<ReturnType<typeof startSpeechServer>>,
    private readonly speechUrls: SpeechUrls,
  ) {}

  /** With `voice: 'espeak-ng'`, the service speaks with espeak-ng on this machine instead of the stack's speech server. */
  static async start(o: { voice?: 'espeak-ng' } = {}): Promise<Stack> {
    const dataDir = mkdtempSync(join(tmpdir(), 'concierge-e2e-'));
    // The service's speech recogniser: an OpenAI-compatible endpoint that checks each WAV and hears HEARD.
    const transcriber = await startTranscriptionServer((upload, res) => {
      const fine =
        upload.wav.sampleRate === 16000 &&
        upload.wav.channels === 1 &&
        upload.wav.dataBytes === upload.wav.declaredBytes;
      res
        .writeHead(fine ? 200 : 400, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(fine ? { text: upload.wav.dataBytes >= 16_000 ? HEARD : '' } : { error: 'not 16 kHz mono' }),
        );
    });
    // The service's voice: an OpenAI-compatible speech endpoint streaming a tone, 20 ms a character.
    const synthesiser = await startSpeechServer();
    const speechUrls = { transcriber: transcriber.url, synthesiser: o.voice ?? synthesiser.url };
    const service = await startServiceProcess(serviceEnv(dataDir, '0', speechUrls));
    const made = admin(dataDir, speechUrls, [
      'create-customer',
      '--name',
      'Harbor Hotel (e2e)',
      '--email',
      'reception@harbor.example',
      '--role',
      'agent',
    ]);
    const apiKey = apiKeyIn(made);
    const receptionWelcome = welcomeIn(made);
    const relay = await Relay.start(new URL(service.url));
    const statePath = join(dataDir, 'demo.json');
    // Tokens that live 65 s: the widget refreshes them 60 s early, so every test runs across refreshes.
    const demo = await startNodeProcess(
      'demo/main.ts',
      {
        SERVICE_URL: service.url,
        DEMO_PUBLIC_SERVICE_URL: relay.url,
        DEMO_API_KEY: apiKey,
        DEMO_PORT: '0',
        DEMO_STATE: statePath,
        DEMO_TOKEN_TTL_S: String(TOKEN_TTL_S),
      },
      /^Demo at (http:\/\/\S+)$/m,
    );
    const { deploymentId, signingSecret } = JSON.parse(readFileSync(statePath, 'utf8')) as {
      deploymentId: string;
      signingSecret: string;
    };
    const stack = new Stack(
      service,
      demo,
      relay,
      dataDir,
      service.url,
      demo.url,
      apiKey,
      deploymentId,
      signingSecret,
      receptionWelcome,
      transcriber,
      synthesiser,
      speechUrls,
    );
    // The browser's (scripted) voice unless a test asks for the service's.
    await stack.synthesiseSpeech('browser');
    return stack;
  }

  /** A new customer with a console user, as `npm run admin -- create-customer --email` makes them: its key and the welcome token. */
  newConsoleCustomer(name: string, email: string): { apiKey: string; welcomeToken: string } {
    const made = admin(this.dataDir, this.speechUrls, ['create-customer', '--name', name, '--email', email]);
    return { apiKey: apiKeyIn(made), welcomeToken: welcomeIn(made) };
  }

  /** A fresh one-time sign-in link's token for an existing console user, as for a forgotten password. */
  welcomeAgain(email: string): string {
    return welcomeIn(admin(this.dataDir, this.speechUrls, ['create-user', '--email', email]));
  }

  /** Moves every console session past its 12 h end, in the running service's own store (as time would). */
  expireConsoleSessions(): void {
    this.inStore('UPDATE console_sessions SET expires_at = ?', new Date(Date.now() - 1_000).toISOString());
  }

  /** Moves every open request for a person `minutes` into the past, in the running service's own store (as time would). */
  ageRequestsForPerson(minutes: number): void {
    this.inStore(
      'UPDATE conversations SET handoff_at = ? WHERE needs_person = 1',
      new Date(Date.now() - minutes * 60_000).toISOString(),
    );
  }

  /** Marks a deployment's transcript target disabled, as a 410 Gone from it would. */
  disableTranscriptTarget(deploymentId: string, reason: string): void {
    this.inStore(
      "UPDATE deployments SET transcript_hook_status = 'disabled', transcript_hook_disabled_at = ?, transcript_hook_disabled_reason = ? WHERE id = ?",
      new Date().toISOString(),
      reason,
      deploymentId,
    );
  }

  /** One statement on the running service's own store. */
  private inStore(statement: string, ...values: string[]): void {
    const db = new SQLite(join(this.dataDir, 'concierge.sqlite'));
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare(statement).run(...values);
    } finally {
      db.close();
    }
  }

  /** Stops the service gracefully and starts it again on the same port and data. */
  async restartService(downMs = 0): Promise<void> {
    this.service.child.kill('SIGTERM');
    await this.service.exited;
    await new Promise((r) => setTimeout(r, downMs));
    this.service = await startServiceProcess(serviceEnv(this.dataDir, new URL(this.serviceUrl).port, this.speechUrls));
  }

  /** How the hotel's server answers turns, and how long the user tokens it mints from now on live. */
  async behave(mode: string, delayMs = 800, tokenTtlS = TOKEN_TTL_S): Promise<void> {
    const res = await fetch(`${this.demoUrl}/qa/behaviour`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode, delayMs, tokenTtlS }),
    });
    if (res.status !== 200) throw new Error(`behaviour: ${res.status}`);
  }

  /** How many times the hotel's turn hook was called with this question. */
  async hookCalls(text: string): Promise<number> {
    const wire = (await (await fetch(`${this.demoUrl}/qa/wire`)).json()) as {
      kind: string;
      detail: { body?: { text?: string } };
    }[];
    return wire.filter((e) => e.kind === 'hook' && e.detail.body?.text === text).length;
  }

  /** The turn the hotel's hook was last called with for this question (with `no_reply`, the test answers it itself). */
  async hookedTurn(text: string): Promise<HookedTurn> {
    for (let i = 0; i < 100; i++) {
      const wire = (await (await fetch(`${this.demoUrl}/qa/wire`)).json()) as {
        kind: string;
        detail: { body?: HookedTurn & { text?: string } };
      }[];
      const hooked = wire.findLast((e) => e.kind === 'hook' && e.detail.body?.text === text)?.detail.body;
      if (hooked) return hooked;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the hook never got "${text}"`);
  }

  /** What the visitor heard of a turn's spoken reply, as the service keeps it (README, The agent's own voice). */
  async heard(turn: HookedTurn): Promise<{ text: string; interrupted: boolean } | null | undefined> {
    const res = await fetch(`${this.serviceUrl}/api/v1/conversations/${turn.conversation_id}`, {
      headers: { authorization: `Bearer ${this.apiKey}` },
    });
    const detail = (await res.json()) as {
      data: { turns: { id: string; heard: { text: string; interrupted: boolean } | null }[] };
    };
    return detail.data.turns.find((t) => t.id === turn.turn_id)?.heard;
  }

  /** Posts a reply or a part for a turn, signed as the hotel's server signs it; the service's status. */
  async reply(turn: HookedTurn, fields: Record<string, unknown>): Promise<number> {
    const body = JSON.stringify({ conversation_id: turn.conversation_id, turn_id: turn.turn_id, ...fields });
    const signature = `sha256=${createHmac('sha256', this.signingSecret).update(body).digest('hex')}`;
    const res = await fetch(turn.reply_url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signature },
    });
    return res.status;
  }

  async deployment(action: 'activate' | 'deactivate'): Promise<void> {
    const res = await fetch(`${this.serviceUrl}/api/v1/deployments/${this.deploymentId}/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    if (res.status !== 200) throw new Error(`${action}: ${res.status}`);
  }

  async stop(): Promise<void> {
    this.demo.child.kill('SIGTERM');
    this.service.child.kill('SIGTERM');
    await this.service.exited;
    await this.relay.close();
    rmSync(this.dataDir, { recursive: true, force: true });
    await this.transcriber.close();
    await this.synthesiser.close();
  }

  /** Where the hotel's deployment has visitors' speech recognised: `auto`, `browser`, `service` or `off`. */
  recogniseSpeech(setting: string): Promise<void> {
    return this.runtime('speech_recognition', setting);
  }

  /** Whose voice reads the hotel's replies out: `auto`, `service`, `browser` or `off`. */
  synthesiseSpeech(setting: string): Promise<void> {
    return this.runtime('speech_synthesis', setting);
  }

  /** How the hotel's visitors talk (README, Hands-free voice): `hands_free`, `push_to_talk`, or undefined for the default. */
  voiceMode(mode: 'hands_free' | 'push_to_talk' | undefined): Promise<void> {
    return this.runtime('voice_mode', mode);
  }

  /** One setting of the hotel's deployment's runtime_config, the others kept; undefined leaves it out. */
  private async runtime(key: string, setting: string | undefined): Promise<void> {
    const url = `${this.serviceUrl}/api/v1/deployments/${this.deploymentId}`;
    const headers = { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' };
    const current = (
      (await (await fetch(url, { headers })).json()) as { data: { runtime_config: Record<string, unknown> } }
    ).data.runtime_config;
    const res = await fetch(url, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ runtime_config: { ...current, [key]: setting } }),
    });
    if (res.status !== 200) throw new Error(`${key}: ${res.status}`);
  }
}

/** What `npm run admin -- …` prints, run against a stack's store. */
function admin(dataDir: string, speechUrls: SpeechUrls, args: string[]): string {
  const ran = spawnSync(process.execPath, [...TSX, 'server/src/admin.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...serviceEnv(dataDir, '0', speechUrls) },
    encoding: 'utf8',
  });
  if (ran.status !== 0) throw new Error(`admin ${args[0]} failed: ${ran.stderr}`);
  return ran.stdout;
}

function apiKeyIn(printed: string): string {
  const key = /^API key: (vak_\S+)$/m.exec(printed)?.[1];
  if (!key) throw new Error(`no API key in: ${printed}`);
  return key;
}

/** The token of the console sign-in link an admin command printed. */
function welcomeIn(printed: string): string {
  const token = /^Console sign-in: \S+\/console\/#\/welcome\/(\S+)$/m.exec(printed)?.[1];
  if (!token) throw new Error(`no sign-in link in: ${printed}`);
  return token;
}

/** The stack's speech servers: the recogniser, and the synthesiser (or espeak-ng on this machine). */
interface SpeechUrls {
  transcriber: string;
  synthesiser: string;
}

function serviceEnv(dataDir: string, port: string, speech: SpeechUrls): NodeJS.ProcessEnv {
  // The demo hotel's hooks and the speech servers are on loopback, which the egress guard refuses unless allowed.
  return {
    PORT: port,
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    HOOK_ALLOWED_HOSTS: '*@127.0.0.1,*@localhost',
    SPEECH_TO_TEXT_URL: speech.transcriber,
    ...(speech.synthesiser === 'espeak-ng'
      ? { TEXT_TO_SPEECH: 'espeak-ng' }
      : { TEXT_TO_SPEECH_URL: speech.synthesiser }),
  };
}
