// Credentials never reach a log line.
import { maskCredentialsInUrl } from '../../../src/lib/mask';

it('masks user and password in every redis URL of a list', () => {
  expect(
    maskCredentialsInUrl('mymaster,redis://user:pass@host1:26379,redis://:p@w0rd@host2:26379'),
  ).toBe('mymaster,redis://*****@host1:26379,redis://*****@host2:26379');
  expect(maskCredentialsInUrl('rediss://admin:secret@cache:6380/0')).toBe(
    'rediss://*****@cache:6380/0',
  );
});

it('leaves URLs without credentials alone', () => {
  expect(maskCredentialsInUrl('localhost:6379')).toBe('localhost:6379');
  expect(maskCredentialsInUrl('/var/run/redis.sock')).toBe('/var/run/redis.sock');
});
