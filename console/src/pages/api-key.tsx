import { useState } from 'preact/hooks';
import { get, post } from '../api';
import { when } from '../logic';
import type { ApiKeySettings, RotatedApiKey, Usage } from '../types';
import { Empty, ErrorNote, Loading, OnceSecret, Title, useAction, useLoad } from '../ui';

/** Requests per day as bars (errors in their own colour), with the numbers in a table for screen readers. */
function DailyChart({ daily }: { daily: Usage['daily'] }) {
  const max = Math.max(1, ...daily.map((d) => d.requests));
  const width = 12;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${daily.length * width} 100`} preserveAspectRatio="none" role="img" aria-label="Requests per day">
        {daily.map((d, i) => {
          const h = (d.requests / max) * 100;
          const e = (d.errors / max) * 100;
          return (
            <g key={d.date}>
              <title>{`${d.date}: ${d.requests} requests, ${d.errors} errors`}</title>
              <rect class="bar" x={i * width + 1} y={100 - h} width={width - 2} height={h} />
              <rect class="bar-error" x={i * width + 1} y={100 - e} width={width - 2} height={e} />
            </g>
          );
        })}
      </svg>
      <figcaption>
        Requests per day, {daily[0]?.date} to {daily.at(-1)?.date} (errors in red)
      </figcaption>
    </figure>
  );
}

export function ApiKeyPage() {
  const settings = useLoad(() => get<ApiKeySettings>('/api/v1/settings/api-key'), []);
  const [days, setDays] = useState(30);
  const usage = useLoad(() => get<Usage>(`/api/v1/settings/api-key/usage?days=${days}`), [days]);
  const [grace, setGrace] = useState('0');
  const [rotated, setRotated] = useState<RotatedApiKey>();
  const rotate = useAction(async () => {
    if (grace === '0' && !confirm('The current key stops working at once. Rotate?')) return;
    setRotated(await post<RotatedApiKey>('/api/v1/settings/api-key/rotate', { grace_period_s: Number(grace) }));
    settings.reload();
  });
  const key = settings.data;
  return (
    <section>
      <Title>API key</Title>
      <ErrorNote error={settings.error} />
      {!key && !settings.error && <Loading what="the key" />}
      {key && (
        <dl class="card facts">
          <dt>Key</dt>
          <dd>
            <code>
              {key.prefix}…{key.last4}
            </code>
          </dd>
          <dt>Created</dt>
          <dd>{when(key.created_at)}</dd>
          <dt>Last used</dt>
          <dd>{when(key.last_used_at)}</dd>
          {key.previous_key_expires_at && (
            <>
              <dt>Previous key works until</dt>
              <dd>{when(key.previous_key_expires_at)}</dd>
            </>
          )}
        </dl>
      )}
      <section class="card">
        <h2>Rotate</h2>
        <p>A new key replaces this one. With a grace period, the old key keeps working while you deploy the new one.</p>
        <div class="filters">
          <label>
            Grace period
            <select value={grace} onChange={(e) => setGrace(e.currentTarget.value)}>
              <option value="0">None: the old key stops at once</option>
              <option value="3600">1 hour</option>
              <option value="86400">1 day</option>
              <option value="604800">7 days</option>
            </select>
          </label>
          <button type="button" class="danger" disabled={rotate.busy} onClick={() => rotate.start()}>
            Rotate key
          </button>
        </div>
        <ErrorNote error={rotate.error} />
        {rotated && <OnceSecret label="New API key" value={rotated.key} />}
      </section>
      <section class="card">
        <h2>Usage</h2>
        <div class="filters">
          <label>
            Period
            <select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
              <option value={7}>7 days</option>
              <option value={30}>30 days</option>
              <option value={90}>90 days</option>
            </select>
          </label>
        </div>
        <ErrorNote error={usage.error} />
        {usage.data && (
          <>
            <p>
              {usage.data.total_requests} requests, {usage.data.total_errors} errors.
            </p>
            <DailyChart daily={usage.data.daily} />
            {usage.data.by_route.length === 0 ? (
              <Empty>No request counted yet in this period (counts are written every few seconds).</Empty>
            ) : (
              <table>
                <caption>Requests per route</caption>
                <thead>
                  <tr>
                    <th scope="col">Method</th>
                    <th scope="col">Route</th>
                    <th scope="col">Requests</th>
                  </tr>
                </thead>
                <tbody>
                  {usage.data.by_route.map((r) => (
                    <tr key={r.method + r.route}>
                      <td>{r.method}</td>
                      <td>
                        <code>{r.route}</code>
                      </td>
                      <td>{r.requests}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </section>
    </section>
  );
}
