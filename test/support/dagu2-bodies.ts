// Bodies below are shaped exactly like Dagu 2.x's api/v1/api.yaml (v2.14): DAGFile, DAGRunSummary,
// DAGRunDetails, Node, Step, SubDAGRun, HumanTaskConfig, ApprovalConfig, Log.

export const LOGS = '/var/lib/dagu/logs';

export const summary2x = {
  dagRunId: '20260701T010000Z',
  name: 'nightly.report',
  workspace: 'ops',
  status: 4,
  statusLabel: 'succeeded',
  queuedAt: '',
  autoRetryCount: 0,
  scheduleTime: '2026-07-01T01:00:00Z',
  startedAt: '2026-07-01T03:00:05+02:00',
  finishedAt: '2026-07-01T03:02:00+02:00',
  artifactsAvailable: false,
  triggerType: 'scheduler',
  labels: ['team-a'],
};

export function node2x(name: string, extra: Record<string, unknown> = {}) {
  const base = `${LOGS}/nightly_report/dag-run_20260701_010000Z_20260701T010000Z/run_20260701_010005Z_9f8e7d`;
  return {
    step: { name, executorConfig: { type: 'command', config: {} } },
    stdout: `${base}/${name}.out`,
    stderr: `${base}/${name}.err`,
    startedAt: '2026-07-01T03:00:05+02:00',
    finishedAt: '2026-07-01T03:00:09+02:00',
    status: 4,
    statusLabel: 'succeeded',
    retryCount: 0,
    doneCount: 1,
    ...extra,
  };
}

export const details2x = {
  ...summary2x,
  status: 7,
  statusLabel: 'waiting',
  finishedAt: '',
  rootDAGRunName: 'nightly.report',
  rootDAGRunId: '20260701T010000Z',
  log: `${LOGS}/nightly_report/dag-run_20260701_010000Z_20260701T010000Z/dag-run_20260701.010000.000.2026.log`,
  humanTaskResumePending: true,
  error: `definition warning in ${LOGS}/nightly_report/x.yaml`,
  nodes: [
    node2x('review numbers', {
      startedAt: '2026-07-01T03:01:00+02:00',
      finishedAt: '',
      status: 7,
      statusLabel: 'waiting',
      step: {
        name: 'review numbers',
        humanTask: {
          prompt: 'Are the totals right?',
          form: { type: 'object', properties: { ok: { type: 'boolean' } } },
        },
      },
    }),
    node2x('extract', { startedAt: '2026-07-01T03:00:05+02:00' }),
    node2x('fan out', {
      startedAt: '2026-07-01T03:00:10+02:00',
      step: { name: 'fan out', executorConfig: { type: 'foreach', config: {} } },
    }),
    node2x('call child', {
      startedAt: '2026-07-01T03:00:20+02:00',
      step: { name: 'call child', call: 'child', executorConfig: { type: 'dag' } },
      subRuns: [{ dagRunId: 'child-1', dagName: 'child' }],
      subRunsRepeated: [{ dagRunId: 'child-2', params: '{}' }],
    }),
    node2x('load/step', {
      startedAt: '2026-07-01T03:00:30+02:00',
      status: 2,
      statusLabel: 'failed',
      error: `exit status 1: open ${LOGS}/nightly_report/tmp.csv: permission denied`,
    }),
    node2x('approve', {
      startedAt: '2026-07-01T03:00:40+02:00',
      status: 7,
      statusLabel: 'waiting',
      step: {
        name: 'approve',
        approval: { prompt: 'Ship?', input: ['reason'], required: ['reason'], rewindTo: 'extract' },
      },
    }),
    node2x('retry me', { startedAt: '2026-07-01T03:00:50+02:00', status: 9, statusLabel: 'retrying' }),
    node2x('later', {
      startedAt: '',
      finishedAt: '',
      status: 0,
      statusLabel: 'not_started',
      stdout: '',
      stderr: '',
    }),
  ],
  onAbort: node2x('onAbort', { status: 0 }),
};
