import type { Db } from '../../database.js';
import { HEARTBEAT_EVERY_MS } from '../../nodes/node-heartbeat.js';
import { BackgroundLoop } from '../../shared/background-loop.js';
import type { Parts } from '../../shared/parts.js';
import type { Dialect } from '../../store/db.js';
import type { StoreHealth } from '../../store/store-health.js';
import { WaitNotices } from '../conversations/wait-notices.js';
import type { DeploymentDirectory } from '../../deployments/deployment-context.js';
import type { EventRecorder } from '../events/event.recorder.js';
import type { TurnService } from './turn.service.js';
import { TurnSweep } from './turn.sweep.js';

/**
 * What moves turns on when no message does (README, Concierge sessions; A person in the
 * conversation): turns a silent node left half done taken over, turns whose time is up swept,
 * and visitors waiting for a person told so. Each a loop of the app's parts; the take-over stops
 * first, so a stopping node takes nothing more on.
 */
export function turnUpkeep(
  parts: Parts,
  deps: {
    turns: TurnService;
    db: Db;
    dialect: Dialect;
    deployments: DeploymentDirectory;
    events: EventRecorder;
    health: StoreHealth;
  },
  settings: { sweepIntervalMs: number },
): void {
  const { turns, db, dialect, deployments, events, health } = deps;
  parts.add(
    new BackgroundLoop(
      { what: 'hook take-over', pass: () => turns.takeOverSilentNodes(), health },
      { everyMs: HEARTBEAT_EVERY_MS },
    ),
  );
  const sweep = new TurnSweep({ db, deployments, events, dialect });
  parts.add(
    new BackgroundLoop(
      { what: 'turn sweep', pass: () => sweep.sweep(), health },
      { everyMs: settings.sweepIntervalMs },
    ),
  );
  const waitNotices = new WaitNotices({ db, deployments, events });
  parts.add(
    new BackgroundLoop(
      { what: 'wait notices', pass: () => waitNotices.sweep(), health },
      { everyMs: settings.sweepIntervalMs },
    ),
  );
}
