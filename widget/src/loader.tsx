import { render } from 'preact';
import { PAGE_DATA_BYTES } from '#protocol/page-rules';
import { browserPage, type Greeter, greeter, type ProactiveRule } from './greeting/greeter';
import { inLanguage } from '#protocol/in-language';
import { type ClientAction, SessionClient, type SessionEvent } from './session/client';
import { browserSurroundings } from './session/surroundings';
import { recogniserIn } from './speech/recogniser-here';
import type { Speech } from './speech/speech';
import { lazyVoice, type Voice } from './speech/voice';
import { App } from './ui/app';
import { loadWords, localeFor } from './ui/words';
import css from './ui/launcher.css?inline';
import { adopt } from './ui/styles';

export interface InitOptions {
  deploymentId: string;
  /** The service's base URL; defaults to where this script was loaded from. */
  baseUrl?: string;
  /** Resolves with a user token minted by the customer's server. */
  getToken?: () => Promise<string>;
  /** Instead of getToken: the customer's endpoint, POSTed with credentials, answering `{"token": "..."}`. */
  tokenUrl?: string;
  /** Replaces the browser's Web Speech API (tests, other engines). */
  speech?: Speech;
  /** Start with the panel open. */
  open?: boolean;
  /** The widget's words in this locale, your page's (README, The widget in your visitors' languages): the language menu then changes only the conversation's language. */
  locale?: string;
}

type EventName = SessionEvent['type'];
type Handler = (event: SessionEvent) => void;
/** What the host page registers for a client action: its `args`, and the turn whose reply asked for it. */
type ActionHandler = (args: Record<string, unknown>, context: { turnId: string | undefined }) => unknown;

/** The host page's client actions, by name: registered once for the page, whatever widget runs. */
const actions = new Map<string, ActionHandler>();

const PREFIX = '[concierge]';
/** The service this module was loaded from. */
const scriptBase = new URL(import.meta.url).origin;

/** One widget on the page; the public API below drives it and never throws into the host page. */
class Widget {
  readonly #host = document.createElement('div');
  readonly #client: SessionClient;
  readonly #speech: Speech | undefined;
  /** The agent's voice: the service's audio, or the browser's voice, with what was heard of it. */
  readonly #voice: Voice;
  readonly #handlers = new Map<EventName, Set<Handler>>();
  #opened = false;
  #destroyed = false;
  /** Greeting visitors first (README, Greeting visitors first): the rules on this page, and the teaser they show. */
  readonly #greeter: Greeter;
  #teaser: { rule: ProactiveRule; text: string } | undefined;
  /** A rule `Concierge.greet` named before the rules arrived. */
  #asked: string | undefined;

  readonly #options: InitOptions;

  constructor(options: InitOptions) {
    this.#options = options;
    const baseUrl = (this.#baseUrl = (options.baseUrl ?? scriptBase).replace(/\/$/, ''));
    const getToken =
      options.getToken ?? (options.tokenUrl ? fetchToken(new URL(options.tokenUrl, location.href).href) : undefined);
    if (!options.deploymentId || !getToken) throw new Error('init needs deploymentId and getToken (or tokenUrl)');
    // The browser's speech comes with the panel or the player: every page only asks whether it recognises.
    const speech = (this.#speech = options.speech);
    this.#voice = lazyVoice(async () => {
      const [{ Player }, { pageSpeech }] = await Promise.all([import('./speech/player'), import('./speech/speech')]);
      return new Player({
        speech: speech ?? pageSpeech(),
        voice: () => ({
          language: this.#client.language,
          voice: this.#client.view.agent?.voice ?? undefined,
          pronunciations: this.#client.view.agent?.pronunciations,
        }),
        played: (at, state, offsetMs) => this.#client.played(at, state, offsetMs),
        lines: () => this.#client.view.lines,
        begins: (at, text, voice) =>
          this.#dispatch({ type: 'speech', turnId: at.turnId, sentence: at.sentence, text, voice }),
      });
    });
    this.#client = new SessionClient({
      baseUrl,
      deploymentId: options.deploymentId,
      getToken,
      storage: safeStorage('sessionStorage'),
      surroundings: browserSurroundings(),
      page: () => ({ url: location.href.slice(0, 2000), title: document.title.slice(0, 300) }),
      browserRecognition: speech ? speech.canListen : !!recogniserIn(window),
      voice: this.#voice,
      act: (action, turnId) => this.#runAction(action, turnId),
    });
    this.#greeter = greeter({
      page: browserPage(),
      deploymentId: options.deploymentId,
      session: safeStorage('sessionStorage'),
      visitor: safeStorage('localStorage'),
      show: (rule) => this.#greet(rule),
      busy: () => this.#opened || !!this.#teaser || this.#client.view.lines.some((l) => l.who === 'user'),
    });
    this.#client.onEvent((event) => {
      // The agent's language is known once the session is ready: the words may follow it.
      if (event.type === 'ready') {
        this.#showWords();
        this.#greeter.start(this.#client.rules);
        if (this.#asked) this.greetNow(this.#asked);
      }
      this.#dispatch(event);
    });
    this.#host.setAttribute('data-concierge', '');
    adopt(this.#host.attachShadow({ mode: 'open' }), css);
    // The bundle may run (async) before <body> exists: the host joins the page once it does.
    const mount = () => document.body.appendChild(this.#host);
    if (document.body) mount();
    else document.addEventListener('DOMContentLoaded', mount, { once: true });
    this.#opened = Boolean(options.open);
    this.#client.start();
    this.#showWords();
    this.#render();
  }

  readonly #baseUrl: string;

  /** The widget's words follow `init({locale})`, the visitor's menu choice, the browser's languages, the agent's language, then English. */
  #languages() {
    return [
      this.#options.locale,
      this.#client.chosenLanguage,
      ...navigator.languages,
      this.#client.view.agent?.language,
    ];
  }

  #showWords(): void {
    void loadWords(localeFor(this.#languages()), this.#baseUrl).then(() => this.#render());
  }

  /** A greeting rule holds: its teaser beside the launcher, or the panel opened for it (never a sound before a click). */
  #greet(rule: ProactiveRule): void {
    this.#client.approached(rule.id, 'shown');
    this.#teaser = { rule, text: inLanguage(rule.teaser, this.#languages()) };
    if (rule.open) this.setOpen(true);
    else this.#render();
  }

  /** `Concierge.greet(ruleId)`: the rule's teaser now, whatever its conditions (the console's preview). */
  greetNow(id: string): void {
    this.#asked = undefined;
    const rule = this.#client.rules.find((r) => r.id === id);
    if (rule) return this.#greet(rule);
    // Before `ready` the rules are not known: the rule is greeted once they are.
    if (!this.#client.view.agent) this.#asked = id;
    else this.#dispatch({ type: 'error', code: 'unknown_rule', message: `greet: the deployment has no rule ${id}` });
  }

  /** The visitor closed the teaser: nobody approaches them again in this visit. */
  #dismissTeaser(): void {
    this.#teaser = undefined;
    this.#greeter.quiet();
    this.#render();
  }

  setOpen(open: boolean): void {
    // Opened with a teaser showing: the conversation its rule started.
    if (open && this.#teaser) this.#client.approached(this.#teaser.rule.id, 'opened');
    if (!open && this.#opened) this.#greeter.quiet();
    this.#teaser = undefined;
    this.#opened = open;
    this.#render();
  }

  /**
   * `Concierge.trigger(name, data)`: rules waiting for the event may hold, and the conversation
   * gets it. Data too large never leaves the page; a name the service refuses comes back as its
   * `invalid_message` error.
   */
  trigger(name: string, data?: unknown): void {
    if (!this.#fits('trigger', data)) return;
    this.#greeter.trigger(name);
    this.#client.pageEvent(name, data);
  }

  /** `Concierge.setContext(obj)`: what the agent is told of the visit from now on. */
  setContext(data: Record<string, unknown>): void {
    if (this.#fits('setContext', data)) this.#client.setContext(data);
  }

  /** Whether `data` is JSON of at most PAGE_DATA_BYTES (a cycle is not JSON at all); the page's `error` handlers hear why not. */
  #fits(call: string, data: unknown): boolean {
    try {
      if (new TextEncoder().encode(JSON.stringify(data) ?? '').length <= PAGE_DATA_BYTES) return true;
    } catch {
      // not JSON
    }
    this.#dispatch({
      type: 'error',
      code: 'invalid_page_data',
      message: `${call}: data must be JSON of at most ${PAGE_DATA_BYTES} bytes`,
    });
    return false;
  }

  on(name: EventName, handler: Handler): void {
    let set = this.#handlers.get(name);
    if (!set) this.#handlers.set(name, (set = new Set()));
    set.add(handler);
  }

  destroy(): void {
    this.#destroyed = true;
    this.#greeter.stop();
    this.#client.stop();
    this.#voice.stop();
    render(null, this.#host.shadowRoot!);
    this.#host.remove();
  }

  /** Runs a client action's handler; a missing or failing one is told as `action_failed`, and the widget goes on. */
  #runAction(action: ClientAction, turnId: string | undefined): void {
    const failed = (why: unknown) =>
      this.#dispatch({
        type: 'error',
        code: 'action_failed',
        name: action.name,
        message: `${action.name}: ${why instanceof Error ? why.message : String(why)}`,
      });
    const handler = actions.get(action.name);
    if (!handler) return failed('not registered (Concierge.registerAction)');
    try {
      // A handler may return a promise: its rejection fails the action too.
      Promise.resolve(handler(action.args ?? {}, { turnId })).catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  #dispatch(event: SessionEvent): void {
    for (const handler of this.#handlers.get(event.type) ?? []) {
      try {
        handler(event);
      } catch (err) {
        console.error(PREFIX, 'an event handler threw', err);
      }
    }
  }

  #render(): void {
    // A catalogue that arrives after destroy() draws nothing.
    if (this.#destroyed) return;
    const onError = (code: string, message: string) => this.#dispatch({ type: 'error', code, message });
    const onLanguage = (tag: string) => {
      this.#client.chooseLanguage(tag);
      this.#showWords();
    };
    render(
      <App
        client={this.#client}
        speech={this.#speech}
        voice={this.#voice}
        open={this.#opened}
        setOpen={(open) => this.setOpen(open)}
        teaser={this.#teaser?.text}
        onDismiss={() => this.#dismissTeaser()}
        onError={onError}
        onLanguage={onLanguage}
      />,
      this.#host.shadowRoot!,
    );
  }
}

function fetchToken(url: string): () => Promise<string> {
  return async () => {
    const res = await fetch(url, { method: 'POST', credentials: 'include' });
    if (!res.ok) throw new Error(`token endpoint answered ${res.status}`);
    const body = (await res.json()) as { token?: unknown };
    if (typeof body.token !== 'string') throw new Error('token endpoint answered without a token');
    return body.token;
  };
}

function safeStorage(which: 'sessionStorage' | 'localStorage'): Storage | undefined {
  try {
    return window[which];
  } catch {
    return undefined; // blocked (sandboxed frame, privacy settings)
  }
}

let current: Widget | undefined;

/** Runs a public call; a failure is logged once with the prefix instead of reaching the host page. */
function guarded<A extends unknown[]>(name: string, call: (...args: A) => void): (...args: A) => void {
  return (...args) => {
    try {
      call(...args);
    } catch (err) {
      console.error(PREFIX, `${name} failed:`, err instanceof Error ? err.message : err);
    }
  };
}

const api = {
  init: guarded('init', (options: InitOptions) => {
    current?.destroy();
    current = new Widget(options);
  }),
  open: guarded('open', () => current?.setOpen(true)),
  close: guarded('close', () => current?.setOpen(false)),
  destroy: guarded('destroy', () => {
    current?.destroy();
    current = undefined;
  }),
  on: guarded('on', (name: EventName, handler: Handler) => current?.on(name, handler)),
  greet: guarded('greet', (ruleId: string) => current?.greetNow(ruleId)),
  trigger: guarded('trigger', (name: string, data?: unknown) => current?.trigger(name, data)),
  setContext: guarded('setContext', (data: Record<string, unknown>) => current?.setContext(data)),
  registerAction: guarded('registerAction', (name: string, handler: ActionHandler) => {
    if (typeof handler !== 'function') throw new Error('registerAction needs a name and a function');
    actions.set(name, handler);
  }),
};

// The script tag (widget/script-tag.js) queued the page's calls, its own data-* attributes first as an `init`: they run in order.
// The page may hold the object the script tag made (`const c = window.Concierge`): that object becomes the API
// itself, so a call made through it after this module loaded runs rather than waiting in a queue nobody reads.
type Queued = [keyof typeof api, unknown[]];
const win = window as unknown as { Concierge?: { q?: Queued[] } };
const concierge = (win.Concierge ??= {});
const queued = concierge.q ?? [];
delete concierge.q;
Object.assign(concierge, api);
for (const [name, args] of queued) (api[name] as (...a: unknown[]) => void)?.(...args);
