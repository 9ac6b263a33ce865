export interface Facts {
  agents: number;
  published: number;
  deployments: number;
  tests: number;
  active: number;
  conversations: number;
  /** Conversations with visitors: not started by Try it. */
  visitors: number;
}

export interface Step {
  id: string;
  title: string;
  done: boolean;
  href: string;
}

/** The getting-started checklist, ticked from what exists; the first step not done is the next one. */
export function checklist(f: Facts): Step[] {
  return [
    { id: 'agent', title: 'Create an agent', done: f.agents > 0, href: '#/agents' },
    { id: 'publish', title: 'Publish it', done: f.published > 0, href: '#/agents' },
    { id: 'deployment', title: 'Create a deployment', done: f.deployments > 0, href: '#/deployments' },
    { id: 'test', title: 'Send a test hook to your server', done: f.tests > 0, href: '#/deployments' },
    { id: 'install', title: 'Activate it and install the snippet', done: f.active > 0, href: '#/deployments' },
    { id: 'conversation', title: 'Have a first conversation', done: f.conversations > 0, href: '#/try' },
  ];
}

/**
 * Live: an active deployment that visitors (not Try it) have talked to. The console then opens on
 * the Inbox, the front desk's page, instead of the checklist (still under Getting started).
 */
export const isLive = (f: Facts): boolean => f.active > 0 && f.visitors > 0;
