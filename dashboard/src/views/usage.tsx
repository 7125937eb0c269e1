import { useMemo } from 'preact/hooks';
import { call, type Usage } from '../api';
import { TimeChart } from '../chart';
import { Card, fmtNumber, Loading, useLoad } from '../ui';

export function UsageView() {
  const { data: u, error } = useLoad(() => call<Usage>('GET', '/v1/usage'), []);
  const chart = useMemo(() => {
    if (!u) return undefined;
    const start = Date.parse(u.period.start);
    const end = Math.min(Date.parse(u.period.end), Date.now() + 86_400_000);
    const by = new Map(u.daily.map((d) => [d.day, d.count]));
    const times: number[] = [];
    for (let t = start; t < end; t += 86_400_000) times.push(t);
    return { times, series: [{ label: 'Events accepted', color: '#2563eb', values: times.map((t) => by.get(new Date(t).toISOString().slice(0, 10)) ?? 0) }] };
  }, [u]);
  const share = u && u.cap ? Math.min(100, (u.used / u.cap) * 100) : 0;
  return (
    <>
      <h1>Usage</h1>
      <Loading error={error}>
        {u && chart && (
          <div class="grid">
            <Card title="This month">
              <dl class="figures">
                <dt>Events this month</dt>
                <dd data-testid="usage-used">{fmtNumber(u.used)}</dd>
                <dt>Remaining quota</dt>
                <dd data-testid="usage-remaining">{u.remaining === null ? 'unlimited' : fmtNumber(u.remaining)}</dd>
                <dt>Monthly cap</dt>
                <dd>{u.cap === null ? 'none' : fmtNumber(u.cap)}</dd>
                <dt>Dropped</dt>
                <dd>{fmtNumber(u.dropped)}</dd>
                <dt>Overage</dt>
                <dd>{fmtNumber(u.overage_events)} events</dd>
                <dt>Estimated overage cost</dt>
                <dd>{u.estimated_overage_cost_usd === null ? '—' : `$${u.estimated_overage_cost_usd.toFixed(2)}`}</dd>
              </dl>
              {u.cap !== null && (
                <>
                  <label for="quota">Quota used</label>
                  <progress id="quota" max={100} value={share}>
                    {share.toFixed(1)}%
                  </progress>
                </>
              )}
              <p class="small muted">
                Plan {u.plan}, {u.period.start.slice(0, 10)} to {u.period.end.slice(0, 10)} (UTC). Over the cap: {u.overage_policy}.
              </p>
            </Card>
            <Card title="Events per day" wide>
              <TimeChart times={chart.times} series={chart.series} label="Events accepted per day this month" bars />
            </Card>
          </div>
        )}
      </Loading>
    </>
  );
}
