import { useState } from 'preact/hooks';
import { list, path, query, text } from '../api';
import { startOfDay, when } from '../format';
import type { AuditEntry } from '../types';
import { DaysAndExport, ErrorNote, ListTable, saveAs, Title, useAction, useLoad } from '../ui';

const FILTERS = [
  ['actor', 'Who (email, user or key id, or api_key, admin, service)'],
  ['action', 'Action code (such as agent.updated)'],
  ['target_type', 'Kind of thing (agent, deployment, user…)'],
  ['target_id', 'Its id'],
] as const;

type Filters = Record<(typeof FILTERS)[number][0] | 'from' | 'to', string>;

/** Who made a change, in words: the person's address, the API key, a command or the service. */
function actorOf(entry: AuditEntry): string {
  const { actor } = entry;
  if (actor.type === 'user') return actor.email ?? `user ${actor.id}`;
  if (actor.type === 'api_key') return 'the API key';
  return actor.type === 'admin' ? 'npm run admin' : 'the service';
}

/** `#/audit`: who changed what, newest first (README, Your team). */
export function AuditPage() {
  const [filters, setFilters] = useState<Filters>({
    actor: '',
    action: '',
    target_type: '',
    target_id: '',
    from: '',
    to: '',
  });
  const [page, setPage] = useState(1);
  const set = (key: keyof Filters) => (e: { currentTarget: HTMLInputElement }) => {
    setFilters({ ...filters, [key]: e.currentTarget.value });
    setPage(1);
  };
  // The date inputs are local days; the API takes instants.
  const params = { ...filters, from: startOfDay(filters.from), to: startOfDay(filters.to, 1) };
  const entries = useLoad(
    () => list<AuditEntry>(path`/api/v1/audit-log${query({ ...params, page })}`),
    [JSON.stringify(params), page],
  );
  const exporting = useAction(async () =>
    saveAs('audit-log.ndjson', await text(path`/api/v1/audit-log/export${query(params)}`), 'application/x-ndjson'),
  );
  return (
    <section>
      <Title>Audit log</Title>
      <p>
        Every change to this account, by whom and from where: the names of the fields changed, never their values. Kept
        for a year (AUDIT_RETENTION_DAYS); nobody can change it.
      </p>
      <div class="filters" role="search">
        {FILTERS.map(([key, label]) => (
          <label key={key}>
            {label}
            <input value={filters[key]} maxLength={200} onInput={set(key)} />
          </label>
        ))}
        <DaysAndExport
          from={filters.from}
          to={filters.to}
          onFrom={set('from')}
          onTo={set('to')}
          exporting={exporting}
        />
      </div>
      <ErrorNote error={exporting.error} />
      <ListTable
        what="Audit records"
        loaded={entries}
        onPage={setPage}
        empty="Nothing recorded matches these filters."
        columns={[
          { label: 'When', cell: (e) => when(e.at) },
          { label: 'Who', cell: actorOf },
          // In words; the code (what the Action filter takes) on hover.
          { label: 'Action', cell: (e) => <span title={e.action}>{actionWords(e.action)}</span> },
          {
            label: 'What',
            cell: (e) => (
              <span title={e.target.id ?? undefined}>
                {e.target.name ?? (e.target.id ? `${kindWords(e.target.type)} (since deleted or unnamed)` : '—')}
                {e.target.name && <span class="muted"> {kindWords(e.target.type)}</span>}
              </span>
            ),
          },
          {
            label: 'Fields',
            cell: (e) => (
              <>
                {e.changes.join(', ') || '—'}
                {e.detail && <div class="muted">{detailOf(e.detail)}</div>}
              </>
            ),
          },
          {
            label: 'From',
            cell: (e) => (e.ip ? <span title={e.user_agent ?? undefined}>{e.ip}</span> : '—'),
          },
        ]}
      />
    </section>
  );
}

/** A kind of thing as a reader says it: `model_endpoint` is "model endpoint", `api_key` "API key". */
const kindWords = (kind: string): string => kind.replace(/_/g, ' ').replace(/\bapi\b/, 'API');

/** An action as a reader says it: `deployment.secret_rotated` is "Deployment secret rotated". */
function actionWords(action: string): string {
  const words = kindWords(action.replace('.', ' '));
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** What a record says beside its field names (an endpoint's origins, how someone signed in), as words. */
function detailOf(detail: NonNullable<AuditEntry['detail']>): string {
  return Object.entries(detail)
    .map(([name, value]) => `${name.replace(/_/g, ' ')}: ${String(value)}`)
    .join(' · ');
}
