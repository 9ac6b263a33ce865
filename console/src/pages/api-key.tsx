import { useState } from 'preact/hooks';
import { get, path, post, query } from '../api';
import { TimeChart } from '../chart';
import { when } from '../format';
import type { ApiKeySettings, RotatedApiKey, Usage } from '../types';
import { Empty, ErrorNote, Loading, OnceSecret, Title, useAction, useLoad } from '../ui';

export function ApiKeyPage() {
  const settings = useLoad(() => get<ApiKeySettings>(path`/api/v1/settings/api-key`), []);
  const [days, setDays] = useState(30);
  const usage = useLoad(() => get<Usage>(path`/api/v1/settings/api-key/usage${query({ days })}`), [days]);
  const [grace, setGrace] = useState('0');
  const [rotated, setRotated] = useState<RotatedApiKey>();
  const rotate = useAction(async () => {
    if (grace === '0' && !confirm('The current key stops working at once. Rotate?')) return;
    setRotated(await post<RotatedApiKey>(path`/api/v1/settings/api-key/rotate`, { grace_period_s: Number(grace) }));
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
            <TimeChart
              title="Requests per day"
              starts={usage.data.daily.map((d) => `${d.date}T00:00:00.000Z`)}
              labels={usage.data.daily.map((d) => d.date)}
              series={[
                { name: 'Requests', values: usage.data.daily.map((d) => d.requests), tone: 'main' },
                { name: 'Errors', values: usage.data.daily.map((d) => d.errors), tone: 'bad' },
              ]}
            />
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
