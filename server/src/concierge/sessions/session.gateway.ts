import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { clientAddress, type ProxyTrust } from '../../http/client-address.js';
import type { PublicAddress } from '../../http/public-address.js';
import { PerKeyCap } from '../../shared/per-key-cap.js';
import { Close, type CloseCode, CloseReason } from '#protocol/close-codes';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { DRAIN_TIMEOUT_MS } from './event-cursor.js';
import { Session, type SessionShared } from './session.js';
import type { SessionServices, SessionSettings } from './session-services.js';

const PATH = /^\/embed\/concierge\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/ws$/;
const MAX_FRAME_BYTES = 16 * 1024;

export interface SessionGatewayParts {
  /** What its sessions speak for. */
  services: SessionServices;
  /** The service's own origin (the console's) passes every deployment's allowed_origins. */
  address: PublicAddress;
}

export interface SessionGatewaySettings extends SessionSettings {
  /** Sockets one client address may hold open before `hello`. */
  preHelloSocketsPerAddress: number;
  /** Proxy hops whose X-Forwarded-For is believed (see {@link clientAddress}). */
  trustProxy: ProxyTrust;
  pingIntervalMs: number;
  maxSocketsPerConversation: number;
}

/** The settings a gateway takes when not given (the README's Concierge sessions). */
export const SESSION_DEFAULTS = {
  helloTimeoutMs: 10_000,
  pingIntervalMs: 30_000,
  maxSocketsPerConversation: 5,
  drainTimeoutMs: DRAIN_TIMEOUT_MS,
} as const;

/**
 * The widget's WebSocket endpoint: the upgrade's checks (path, deployment, Origin, sockets per
 * address), the registry of sessions per conversation, and the heartbeat that drops dead peers.
 * What a socket says is its {@link Session}'s business.
 */
export class SessionGateway {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  private readonly sessions = new Set<Session>();
  private readonly byConversation = new Map<string, Set<Session>>();
  private readonly heartbeat: NodeJS.Timeout;
  /**
   * Sockets that have not said hello cost memory and a file each and prove nothing: one client
   * address may hold only so many, counted from the upgrade until hello succeeds or the socket ends.
   */
  private readonly preHello: PerKeyCap;
  private readonly shared: SessionShared;

  constructor(
    private readonly parts: SessionGatewayParts,
    private readonly settings: SessionGatewaySettings,
  ) {
    this.preHello = new PerKeyCap(settings.preHelloSocketsPerAddress);
    const { newConversationsPerSub, helloTimeoutMs, drainTimeoutMs } = settings;
    this.shared = {
      services: parts.services,
      settings: { newConversationsPerSub, helloTimeoutMs, drainTimeoutMs },
      registry: { join: (id, session) => this.join(id, session), leave: (session) => this.leave(session) },
    };
    this.heartbeat = setInterval(() => {
      for (const session of this.sessions) session.checkAlive();
    }, settings.pingIntervalMs);
    this.heartbeat.unref();
  }

  /** The server's only upgrade handler: any other path is refused with 404. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const match = PATH.exec((req.url ?? '').split('?', 1)[0]!);
    if (!match) return refuseUpgrade(socket, 404, 'Not Found');
    const release = this.preHello.take(clientAddress(req, this.settings.trustProxy));
    if (!release) return refuseUpgrade(socket, 429, 'Too Many Requests', 'Retry-After: 10\r\n');
    socket.once('close', release);
    this.upgrade(req, socket, head, match[1]!, release).catch((err) => {
      if (this.parts.services.health.failed(err, 'websocket upgrade'))
        refuseUpgrade(socket, 503, 'Service Unavailable', 'Retry-After: 1\r\n');
      else refuseUpgrade(socket, 500, 'Internal Server Error');
    });
  }

  /** The widget sockets this node holds (the metrics' gauge). */
  get openSockets(): number {
    return this.wss.clients.size;
  }

  /** Shutdown: every widget is told to reconnect elsewhere (1001). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const session of this.sessions) session.close(Close.goingAway, CloseReason.goingAway);
    this.wss.close();
  }

  private async upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    deploymentId: string,
    helloSaid: () => void,
  ): Promise<void> {
    const admission = this.admission(await this.parts.services.deployments.get(deploymentId), req);
    const { diagnostics } = this.parts.services;
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      // Accepted to be closed at once, the reason in the close: a browser never shows a page the
      // status of a refused upgrade, so the widget could neither say why nor know to stop retrying.
      if ('refused' in admission) return ws.close(admission.refused, admission.reason);
      const { dep, origin } = admission;
      const opened = () => {
        helloSaid();
        diagnostics.opened(dep.id, origin);
      };
      const session = new Session(ws, this.shared, dep, opened);
      this.sessions.add(session);
      ws.on('message', (data, isBinary) => session.receive(data, isBinary));
      ws.on('pong', () => session.answered());
      ws.on('close', () => session.dispose());
      ws.on('error', () => session.dispose());
    });
  }

  /** Whether a widget may open a session of `dep` from this request's page, or the close that says why not. */
  private admission(
    dep: DeploymentContext | undefined,
    req: IncomingMessage,
  ): { dep: DeploymentContext; origin: string | undefined } | { refused: CloseCode; reason: string } {
    if (!dep) return { refused: Close.unknownConversation, reason: CloseReason.unknownDeployment };
    const origin = req.headers.origin;
    const { diagnostics } = this.parts.services;
    const allowed =
      !dep.widget.allowedOrigins.length ||
      (origin !== undefined &&
        (dep.widget.allowedOrigins.includes(origin) || origin === this.parts.address.originFor(req)));
    if (!allowed) {
      diagnostics.refused(dep.id, 'origin_not_allowed', origin ?? '(no Origin header)');
      return { refused: Close.forbidden, reason: CloseReason.originNotAllowed };
    }
    if (dep.status === 'active') return { dep, origin };
    diagnostics.refused(dep.id, 'deployment_inactive', undefined);
    return { refused: Close.ended, reason: CloseReason.deploymentInactive };
  }

  private join(conversationId: string, session: Session): boolean {
    let set = this.byConversation.get(conversationId);
    if (!set) this.byConversation.set(conversationId, (set = new Set()));
    if (set.size >= this.settings.maxSocketsPerConversation) return false;
    set.add(session);
    return true;
  }

  private leave(session: Session): void {
    this.sessions.delete(session);
    const id = session.conversationId;
    if (!id) return;
    const set = this.byConversation.get(id);
    set?.delete(session);
    if (set && !set.size) this.byConversation.delete(id);
  }
}

function refuseUpgrade(socket: Duplex, status: number, reason: string, headers = ''): void {
  if (socket.writable)
    socket.end(`HTTP/1.1 ${status} ${reason}\r\n${headers}Connection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}
