// The committed Grafana dashboard (deploy/monitoring and the Helm chart's copy) is what
// scripts/grafana-dashboard.ts generates: `npm run dashboard` rewrites both after a change.
import { readFileSync } from 'node:fs';
import {
  buildDashboard,
  dashboardJson,
  dashboardQueries,
  DASHBOARD_FILES,
} from '../../../scripts/grafana-dashboard';

describe('the Grafana dashboard', () => {
  test.each(DASHBOARD_FILES)('%s is the generator output', (file) => {
    expect(readFileSync(file, 'utf8')).toBe(dashboardJson());
  });

  test('every panel query is scoped by the job and pod variables', () => {
    const queries = dashboardQueries(buildDashboard());
    expect(queries.length).toBeGreaterThan(20);
    for (const q of queries)
      expect([q, q.includes('job=~"$job", instance=~"$instance"')]).toEqual([q, true]);
  });
});
