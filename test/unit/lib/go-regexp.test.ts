// Go regular expressions with RE2 semantics, and Go's Expand templates resolved to group indexes.
import { GoRegExp } from '../../../src/lib/go-regexp';
import { indexedTemplate } from '../../../src/lib/go-template';

const compile = (pattern: string): GoRegExp => GoRegExp.mustCompile(pattern);

describe('GoRegExp', () => {
  it('reads the (?i) flag group, which JavaScript refuses', () => {
    const jsPattern = '(?i)^ratelimit';
    expect(() => new RegExp(jsPattern)).toThrow();
    expect(compile('(?i)^ratelimit\\.').exec('RateLimit.service')).toEqual(['RateLimit.']);
    expect(compile('^(?i:a)b').exec('AB')).toBeNull();
  });

  it('reads (?P<name>...) groups by number and by name', () => {
    const re = compile('^(?P<domain>[^.]+)\\.(?P<key>[^.]+)$');
    expect(re.exec('api.path')).toEqual(['api.path', 'api', 'path']);
    expect([re.groupIndex('domain'), re.groupIndex('key'), re.groupIndex('nope')]).toEqual([
      1,
      2,
      undefined,
    ]);
    expect(re.groups).toBe(2);
  });

  it('reads POSIX classes as classes, where JavaScript reads a set of characters', () => {
    // In JavaScript [[:digit:]] is one of "[:digt" followed by a literal "]".
    const js = /^[[:digit:]]+$/;
    expect([js.test('2024'), js.test('d]')]).toEqual([false, true]);
    const re = compile('^[[:digit:]]+$');
    expect(re.exec('2024')).toEqual(['2024']);
    expect(re.exec('d]')).toBeNull();
    expect(compile('[[:^alpha:]]+').exec('abc_123')).toEqual(['_123']);
  });

  it('answers a group that took no part with the empty string, as FindStringSubmatch does', () => {
    expect(compile('(a)|(b)').exec('b')).toEqual(['b', '', 'b']);
  });

  it('matches leftmost-first anywhere in the input', () => {
    expect(compile('a+?').exec('xaaa')).toEqual(['a']);
    expect(compile('cat|category').exec('category')).toEqual(['cat']);
  });

  it.each([
    ['(?=a)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['(a)\\1', 'invalid escape sequence: `\\1`'],
    ['a{1001}', 'invalid repeat count: `{1001}`'],
    ['(', 'missing closing ): `(`'],
    ['\\Z', 'invalid escape sequence: `\\Z`'],
  ])('refuses %j as Go does, in its words', (pattern, reason) => {
    expect(GoRegExp.compile(pattern)).toEqual({
      ok: false,
      reason: `error parsing regexp: ${reason}`,
    });
  });

  it('matches in time linear in the input where a backtracking engine explodes', () => {
    const input = `${'a'.repeat(5000)}!`;
    const started = process.hrtime.bigint();
    expect(compile('^(a+)+$').exec(input)).toBeNull();
    // A backtracking engine needs about 2^5000 steps here; this one a few milliseconds.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2000);
  });
});

describe('indexedTemplate', () => {
  const re = compile('^(?P<domain>[^.]+)\\.(?P<key>[^.]+)\\.(x)?$');

  it.each([
    ['rule_$1', 'rule_${1}'],
    ['rule_${2}_total', 'rule_${2}_total'],
    ['$domain', '${1}'],
    ['${key}_hits', '${2}_hits'],
    ['${3}', '${3}'],
    // Go reads the longest name: $1x is the group named 1x, which does not exist.
    ['$1x', ''],
    ['$9', ''],
    ['$nope.end', '.end'],
    ['$01', ''],
    ['plain', 'plain'],
  ])('resolves %j to %j', (template, text) => {
    expect(indexedTemplate(template, re)).toEqual({ ok: true, text });
  });

  it.each(['cost_$$', 'a$', '${1', '$-'])('refuses the literal $ of %j', (template) => {
    expect(indexedTemplate(template, re)).toEqual({
      ok: false,
      reason: `${JSON.stringify(template)} holds a literal $ (Go keeps it as text); this service reads every $ as a group reference`,
    });
  });
});
