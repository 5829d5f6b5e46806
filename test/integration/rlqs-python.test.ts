// An RLQS client this project did not write: Debian's python3-grpcio (gRPC's C core) with stubs
// that python3-grpc-tools generates from api/ at test time opens a stream, reports, and decodes
// the assignment it is answered with and the push a second stream causes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();
const DEBIAN_PYTHON = '/usr/bin/python3';
const API = path.resolve(__dirname, '..', '..', 'api');
const PROTOS = [
  'envoy/service/rate_limit_quota/v3/rlqs.proto',
  'envoy/type/v3/ratelimit_strategy.proto',
  'envoy/type/v3/ratelimit_unit.proto',
  'envoy/type/v3/token_bucket.proto',
];

// Two streams of one channel, each opened with Envoy's first message: A reports and is answered; B's report halves A's share, which
// is pushed to A without A reporting again. A then half-closes and ends with OK, and its share
// is pushed to B at once; B half-closes and ends with OK.
const CLIENT = `
import sys, json, queue, grpc
from google.protobuf.json_format import MessageToDict
sys.path.insert(0, sys.argv[1])
from envoy.service.rate_limit_quota.v3 import rlqs_pb2, rlqs_pb2_grpc

def report():
    # Envoy's first message for a new bucket (createBucketImpl, getUsageFromBucket): the request
    # that made it, and time_elapsed {seconds: 0}, set and empty.
    usage = rlqs_pb2.RateLimitQuotaUsageReports.BucketQuotaUsage(num_requests_allowed=1)
    usage.bucket_id.bucket['name'] = 'api'
    usage.time_elapsed.SetInParent()
    usage.time_elapsed.seconds = 0
    assert usage.HasField('time_elapsed')
    return rlqs_pb2.RateLimitQuotaUsageReports(domain='edge', bucket_quota_usages=[usage])

def messages(q):
    while True:
        item = q.get()
        if item is None:
            return
        yield item

def show(response):
    return MessageToDict(response, preserving_proto_field_name=True)

with grpc.insecure_channel(sys.argv[2]) as channel:
    stub = rlqs_pb2_grpc.RateLimitQuotaServiceStub(channel)
    qa, qb = queue.Queue(), queue.Queue()
    a = stub.StreamRateLimitQuotas(messages(qa), timeout=15)
    qa.put(report())
    first = next(a)
    b = stub.StreamRateLimitQuotas(messages(qb), timeout=15)
    qb.put(report())
    other = next(b)
    push = next(a)
    # One after the other: A's end frees its share, which B is pushed at once.
    qa.put(None)
    after_a = [show(m) for m in a]
    freed = next(b)
    qb.put(None)
    after_b = [show(m) for m in b]
    print(json.dumps({
        'first': show(first), 'other': show(other), 'push': show(push),
        'freed': show(freed), 'left': [after_a, after_b],
        'codes': [a.code().name, b.code().name],
    }))
`;

/** A token bucket of `perSecond` as Envoy applies it: whole tokens every whole second. */
function assignment(perSecond: number): unknown {
  return {
    bucket_action: [
      {
        bucket_id: { bucket: { name: 'api' } },
        quota_assignment_action: {
          assignment_time_to_live: '30s',
          rate_limit_strategy: {
            token_bucket: {
              max_tokens: perSecond,
              tokens_per_fill: perSecond,
              fill_interval: '1.000000001s',
            },
          },
        },
      },
    ],
  };
}

test("Debian's python3-grpcio sends Envoy's exact first message (time_elapsed {seconds: 0}) and gets an assignment and a push", async () => {
  const runtime = new RuntimeDir({
    'edge.yaml':
      'domain: edge\nquota_buckets:\n  - bucket: { name: api }\n    requests_per_unit: 100\n    unit: second\n',
  });
  cleanup(() => {
    runtime.destroy();
  });
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory' },
  });
  cleanup(() => service.stop());
  const stubs = mkdtempSync(path.join(tmpdir(), 'rl-rlqs-py-'));
  cleanup(() => {
    rmSync(stubs, { recursive: true, force: true });
  });

  const generate = spawnSync(
    DEBIAN_PYTHON,
    [
      '-m',
      'grpc_tools.protoc',
      `-I${API}`,
      `--python_out=${stubs}`,
      `--grpc_python_out=${stubs}`,
      ...PROTOS,
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );
  expect({ status: generate.status, stderr: generate.stderr }).toEqual({ status: 0, stderr: '' });

  const run = spawnSync(DEBIAN_PYTHON, ['-c', CLIENT, stubs, `127.0.0.1:${service.ports.grpc}`], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  expect(JSON.parse(run.stdout)).toEqual({
    first: assignment(100),
    other: assignment(50),
    push: assignment(50),
    freed: assignment(100),
    left: [[], []],
    codes: ['OK', 'OK'],
  });
});
