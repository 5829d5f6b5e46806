// The status page's RLQS section: polls /rlqs and lists each bucket rule with the Envoys
// watching its buckets, their shares and demand. Hidden when the service has no quota rules.
'use strict';

(function quotaSection() {
  const POLL_MS = 3000;
  const { byId: $, el } = ui;

  function num(value) {
    return el('td', { className: 'num' }, String(value));
  }

  function cellsRow(cells) {
    return el(
      'tr',
      {},
      cells.map((cell) =>
        cell instanceof Node && cell.nodeName === 'TD' ? cell : el('td', {}, cell),
      ),
    );
  }

  function policyText(policy) {
    if (policy.kind === 'blanket') return policy.rule;
    const unit = policy.unit.toLowerCase();
    const text = `${policy.requestsPerUnit} / ${unit}, ${policy.strategy}`;
    return policy.strategy === 'token_bucket' ? `${text} (max ${policy.maxTokens})` : text;
  }

  function bucketText(bucket) {
    return Object.entries(bucket)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  }

  function envoyText(envoy) {
    return envoy.isLocal ? (envoy.peer ?? envoy.id) : `${envoy.id} (another replica)`;
  }

  function amount(value) {
    return num(value === undefined || value === null ? '—' : value.toLocaleString());
  }

  /** One row per Envoy watching a bucket; a rule no Envoy watches gets one row of its own. */
  function quotaRows(domain, ruleText, policy, buckets) {
    const rows = [];
    for (const b of buckets) {
      for (const envoy of b.envoys) {
        const last =
          envoy.lastReportAgoMs === undefined
            ? ''
            : `${Math.round(envoy.lastReportAgoMs / 1000)} s ago`;
        rows.push(
          cellsRow([
            domain,
            el('td', {}, el('code', {}, ruleText)),
            policy,
            el('td', {}, el('code', {}, bucketText(b.bucket))),
            envoyText(envoy),
            amount(envoy.share),
            amount(envoy.demand),
            last,
          ]),
        );
      }
    }
    if (rows.length === 0)
      rows.push(
        cellsRow([domain, el('td', {}, el('code', {}, ruleText)), policy, '', '', '', '', '']),
      );
    return rows;
  }

  async function refreshQuota() {
    const res = await fetch('/rlqs', {
      headers: { accept: 'application/json' },
      cache: 'no-store',
    });
    const section = $('quota-section');
    if (res.status === 404) {
      section.hidden = true;
      return;
    }
    const body = await res.json();
    const rows = [];
    for (const rule of body.rules)
      rows.push(...quotaRows(rule.domain, rule.bucket, policyText(rule.policy), rule.buckets));
    for (const b of body.bucketsWithoutRule)
      rows.push(...quotaRows(b.domain, 'no rule', 'no assignment', [b]));
    section.hidden = body.rules.length === 0 && body.streams === 0;
    $('quota-note').textContent = `${body.streams} streams open on this replica`;
    $('quota').tBodies[0].replaceChildren(...rows);
    const watched =
      body.rules.some((r) => r.buckets.length > 0) || body.bucketsWithoutRule.length > 0;
    $('quota-empty').hidden = watched;
  }

  async function run() {
    if (!document.hidden) {
      try {
        await refreshQuota();
      } catch (err) {
        $('quota-note').textContent = `cannot read /rlqs: ${err.message}`;
      }
    }
    setTimeout(run, POLL_MS);
  }
  run();
})();
