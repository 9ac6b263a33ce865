import { chromium } from '@playwright/test';
import { CHROMIUM } from '../../e2e/chromium.js';
import { Stack } from '../../e2e/stack.js';
import { DEMO_GREETINGS } from '../../demo/provision.js';

/** How long a visitor reads the page, scrolling, per measurement (s). */
export const GREETER = { seconds: 10, rules: 20 };

/**
 * Twenty rules, none of which ever holds while measured: each scroll event goes through all of
 * them (the most work the greeter does), and one timer waits for the next one's seconds.
 */
const unmet = Array.from({ length: GREETER.rules }, (_, i) => ({
  id: `rule-${i}`,
  when:
    i % 4 === 0
      ? { path: `/section-${i}/**`, seconds_on_page: 5 }
      : i % 4 === 1
        ? { path: '/guide', seconds_on_page: 3_000 + i, scroll_percent: 90 }
        : i % 4 === 2
          ? { event: `never-${i}`, scroll_percent: 10 }
          : { exit_intent: true as const, path: '/**' },
  teaser: { en: `Rule ${i}`, de: `Regel ${i}` },
}));

interface Cost {
  /** Milliseconds of the widget's own script per second on the page. */
  widgetMsPerS: number;
  /** All script on the page per second (the scrolling driver included). */
  scriptMsPerS: number;
  longTasks: number;
}

/**
 * The greeter's cost per page view in real Chromium (README, Greeting visitors first): the demo's
 * guide read for 10 s, scrolled every 50 ms, with the deployment's rules empty (the baseline,
 * measured in the same run) and with twenty. The widget's own time is the CPU profile's samples in
 * its bundle; long tasks from the page's PerformanceObserver.
 */
export async function greeterCost(): Promise<{ bare: Cost; rules: Cost }> {
  const stack = await Stack.start();
  const browser = await chromium.launch(CHROMIUM);
  const setRules = async (proactive: unknown[]) => {
    const res = await fetch(`${stack.serviceUrl}/api/v1/deployments/${stack.deploymentId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ engagement_rules: { proactive } }),
    });
    if (res.status !== 200) throw new Error(`rules: ${res.status}`);
  };
  const measure = async (rules: unknown[]): Promise<Cost> => {
    await setRules(rules);
    const context = await browser.newContext({ viewport: { width: 1280, height: 500 } });
    const page = await context.newPage();
    await page.addInitScript(() => {
      const w = globalThis as unknown as { __long: number; __measuring: boolean };
      w.__long = 0;
      // Long tasks while the visitor reads, not those of the page's load (Node's types know no `longtask`; the browser does).
      new PerformanceObserver((list) => {
        if (w.__measuring) w.__long += list.getEntries().length;
      }).observe({ entryTypes: ['longtask' as 'mark'] });
    });
    await page.goto(`${stack.demoUrl}/guide`);
    await page.getByRole('button', { name: 'Chat with Harbor Hotel' }).waitFor();
    // Settled: `ready` came with the rules, the words and the page's load are done.
    await page.waitForTimeout(2_000);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    const scriptBefore = await scriptSeconds(cdp);
    await cdp.send('Profiler.start');
    await page.evaluate(async (ms) => {
      const w = globalThis as unknown as {
        __measuring: boolean;
        scrollY: number;
        innerHeight: number;
        scrollBy(x: number, y: number): void;
        scrollTo(x: number, y: number): void;
        document: { documentElement: { scrollHeight: number } };
      };
      w.__measuring = true;
      const end = performance.now() + ms;
      while (performance.now() < end) {
        w.scrollBy(0, 4);
        if (w.scrollY + w.innerHeight >= w.document.documentElement.scrollHeight - 1) w.scrollTo(0, 0);
        await new Promise((r) => setTimeout(r, 50));
      }
      w.__measuring = false;
    }, GREETER.seconds * 1000);
    const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: CpuProfile };
    const scriptAfter = await scriptSeconds(cdp);
    const longTasks = await page.evaluate(() => (globalThis as unknown as { __long: number }).__long);
    await context.close();
    return {
      widgetMsPerS: widgetMs(profile) / GREETER.seconds,
      scriptMsPerS: ((scriptAfter - scriptBefore) * 1000) / GREETER.seconds,
      longTasks,
    };
  };
  try {
    // Alternated, three of each: the median of each is reported.
    const bare: Cost[] = [];
    const ruled: Cost[] = [];
    for (let i = 0; i < 3; i++) {
      bare.push(await measure([]));
      ruled.push(await measure(unmet));
    }
    return { bare: medianOf(bare), rules: medianOf(ruled) };
  } finally {
    await setRules(DEMO_GREETINGS).catch(() => {});
    await browser.close();
    await stack.stop();
  }
}

/** Each figure's median over the runs; long tasks, the most in one. */
function medianOf(runs: Cost[]): Cost {
  const median = (pick: (c: Cost) => number) => runs.map(pick).sort((a, b) => a - b)[runs.length >> 1]!;
  return {
    widgetMsPerS: median((c) => c.widgetMsPerS),
    scriptMsPerS: median((c) => c.scriptMsPerS),
    longTasks: Math.max(...runs.map((c) => c.longTasks)),
  };
}

interface CpuProfile {
  nodes: { id: number; callFrame: { url: string } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Milliseconds the profile's samples spent in the widget's own modules. */
function widgetMs(profile: CpuProfile): number {
  const inWidget = new Set(profile.nodes.filter((n) => n.callFrame.url.includes('/widget/assets/')).map((n) => n.id));
  let us = 0;
  profile.samples.forEach((node, i) => {
    if (inWidget.has(node)) us += profile.timeDeltas[i + 1] ?? 0;
  });
  return us / 1000;
}

async function scriptSeconds(cdp: { send(method: 'Performance.getMetrics'): Promise<unknown> }): Promise<number> {
  const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
  return metrics.find((m) => m.name === 'ScriptDuration')!.value;
}
