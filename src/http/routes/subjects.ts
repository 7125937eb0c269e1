import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditTrail } from '../../audit/trail.js';
import { eventView } from '../../storage/event-view.js';
import type { Store } from '../../storage/store.js';
import type { SubjectJobRow, SuppressionRow } from '../../storage/types.js';
import type { Clock } from '../../util/clock.js';
import type { ErasureJobs } from '../../privacy/erasure.js';
import { subjectRecords } from '../../privacy/subject-export.js';
import { MAX_SUPPRESS_DAYS, MAX_SUPPRESSIONS, type SuppressionList } from '../../privacy/suppression.js';
import { MAX_IDENTIFIER_LENGTH, MAX_IDENTIFIERS, SUBJECT_KINDS, SubjectMatcher, valueHint, type SubjectIdentifier } from '../../privacy/subject.js';
import { alertViewsWithAssignees } from '../alert-views.js';
import { auditOrigin } from '../audit-origin.js';
import { requestAccount } from '../context.js';
import { ApiError } from '../errors.js';
import { ErrorResponses, KeyAuth, PageQuery, pageLimit } from '../schemas.js';
import { sendExport } from './search.js';

export interface SubjectRouteDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly jobs: ErasureJobs;
  readonly audit: AuditTrail;
  /** Further texts an export looks for (the identifiers' pseudonyms), when the account has them. */
  readonly aliasesOf?: (accountId: string, identifiers: readonly SubjectIdentifier[]) => readonly string[];
  /** The suppression lists ingestion reads: the keyed hashes of identifiers, and the stamp a change writes. */
  readonly suppressions: SuppressionList;
}

const Identifier = Type.Object(
  {
    kind: Type.Union(
      SUBJECT_KINDS.map((k) => Type.Literal(k)),
      { description: 'Which event field the value is found in: actor_id, email, ip (metadata too), device_id' },
    ),
    value: Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH }),
  },
  { additionalProperties: false },
);
const Identifiers = Type.Array(Identifier, { minItems: 1, maxItems: MAX_IDENTIFIERS, description: 'The identifiers one person is known by' });

const EraseBody = Type.Object(
  {
    identifiers: Identifiers,
    suppress_days: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SUPPRESS_DAYS,
        description: `For how many days (at most ${MAX_SUPPRESS_DAYS}) later events of these identifiers are answered "dropped" and not kept; 0 (the default): none`,
      }),
    ),
  },
  { additionalProperties: false },
);
const ExportBody = Type.Object({ identifiers: Identifiers }, { additionalProperties: false });

const SubjectJob = Type.Object(
  {
    id: Type.String(),
    kind: Type.Literal('erase'),
    status: Type.Union(['queued', 'running', 'done', 'failed'].map((s) => Type.Literal(s))),
    created_at: Type.String({ description: 'ISO 8601' }),
    finished_at: Type.Union([Type.String(), Type.Null()]),
    identifiers: Type.Array(Type.Object({ kind: Type.String(), value_hint: Type.String({ description: 'First character and length, never the value' }) })),
    suppress_days: Type.Integer(),
    progress: Type.Object({ step: Type.Union([Type.String(), Type.Null()]), done_steps: Type.Integer(), total_steps: Type.Integer() }),
    counts: Type.Object({
      events: Type.Integer(),
      alerts: Type.Integer(),
      notes: Type.Integer(),
      audit: Type.Integer(),
      state_keys: Type.Integer(),
      deliveries: Type.Integer(),
    }),
    error: Type.Optional(Type.String()),
  },
  { $id: 'SubjectJob' },
);
const JobAnswer = Type.Object({ job: Type.Ref(SubjectJob) });
const JobsAnswer = Type.Object({ data: Type.Array(Type.Ref(SubjectJob)) });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const Suppression = Type.Object(
  {
    id: Type.String({ description: "The identifier's keyed hash (its pseudonym under the account's key), never the value" }),
    kind: Type.String({ description: 'actor_id, email, ip or device_id' }),
    created_at: Type.String({ description: 'ISO 8601: when the erasure added it (or last extended it)' }),
    expires_at: Type.String({ description: 'ISO 8601: events are kept again from then on' }),
  },
  { $id: 'Suppression' },
);
const SuppressionPage = Type.Object({
  data: Type.Array(Type.Ref(Suppression)),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null at the end' }),
});
const SuppressionQuery = Type.Object(PageQuery, { additionalProperties: false });
const Removed = Type.Object({ removed: Type.Array(Type.Ref(Suppression)) });
const RemoveBody = Type.Object({ identifiers: Identifiers }, { additionalProperties: false });

const suppressionView = (row: SuppressionRow): Static<typeof Suppression> => ({
  id: row.hash,
  kind: row.kind,
  created_at: new Date(row.createdAt).toISOString(),
  expires_at: new Date(row.until).toISOString(),
});

function jobView(job: SubjectJobRow): Static<typeof SubjectJob> {
  const c = job.counts;
  return {
    id: job.id,
    kind: job.kind,
    status: job.status,
    created_at: new Date(job.createdAt).toISOString(),
    finished_at: job.finishedAt === null ? null : new Date(job.finishedAt).toISOString(),
    identifiers: job.identifiers.map((i) => ({ kind: i.kind, value_hint: i.valueHint })),
    suppress_days: job.suppressDays,
    progress: { step: job.step, done_steps: job.doneSteps, total_steps: job.totalSteps },
    counts: {
      events: c.events ?? 0,
      alerts: c.alerts ?? 0,
      notes: c.notes ?? 0,
      audit: c.audit ?? 0,
      state_keys: c.state_keys ?? 0,
      deliveries: c.deliveries ?? 0,
    },
    ...(job.error !== null && job.status !== 'done' ? { error: job.error } : {}),
  };
}

/** The identifiers as the routes take them: trimmed, each once; blank ones refused. */
function identifiersOf(body: { identifiers: readonly { kind: SubjectIdentifier['kind']; value: string }[] }): SubjectIdentifier[] {
  const seen = new Set<string>();
  const out: SubjectIdentifier[] = [];
  body.identifiers.forEach((identifier, i) => {
    const value = identifier.value.trim();
    if (value.length === 0) {
      const message = 'An identifier cannot be blank.';
      throw new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field: `identifiers/${i}/value`, message }] });
    }
    const key = `${identifier.kind}\0${value}`;
    if (!seen.has(key)) out.push({ kind: identifier.kind, value });
    seen.add(key);
  });
  return out;
}

/** What an audit entry says of the identifiers: their kinds and value hints, never the values. */
const hints = (identifiers: readonly SubjectIdentifier[]) => identifiers.map((i) => ({ kind: i.kind, value_hint: valueHint(i.value) }));

/** The identifiers' keyed hashes; a 400 when the instance has no master secret to make them with. */
function hashesOf(deps: SubjectRouteDeps, accountId: string, identifiers: readonly SubjectIdentifier[], field: string) {
  const entries = deps.suppressions.entriesOf(accountId, identifiers);
  if (entries !== undefined) return entries;
  const message = `${field} needs keyed hashes of the identifiers: this instance has no pseudonym secret (the operator sets VIGIL_PSEUDONYM_SECRET)`;
  throw new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field, message }] });
}

/** Erasure and export of a data subject, and the suppression list (secret keys with the `subjects` scope; admins and owners in the dashboard). */
export function registerSubjectRoutes(app: FastifyInstance, deps: SubjectRouteDeps): void {
  app.addSchema(SubjectJob);
  app.addSchema(Suppression);

  app.post<{ Body: Static<typeof EraseBody> }>('/v1/subjects/erase', {
    config: { access: 'subjects' },
    schema: {
      summary: "Erase a data subject: an asynchronous job that deletes or redacts every mention of the identifiers in the account's data",
      tags: ['subjects'],
      security: KeyAuth,
      body: EraseBody,
      response: { 202: JobAnswer, ...ErrorResponses },
    },
    handler: async (request, reply) => {
      const accountId = requestAccount(request).account.id;
      const identifiers = identifiersOf(request.body);
      const suppressDays = request.body.suppress_days ?? 0;
      if (suppressDays > 0) {
        const entries = hashesOf(deps, accountId, identifiers, 'suppress_days');
        const listed = new Set((await deps.store.subjects.listSuppressions(accountId, deps.clock.now())).map((s) => s.hash));
        const added = entries.filter((e) => !listed.has(e.hash)).length;
        if (listed.size + added > MAX_SUPPRESSIONS) {
          const message = `The suppression list holds ${listed.size} identifiers; it holds at most ${MAX_SUPPRESSIONS}. Remove some (DELETE /v1/subjects/suppressions/{id}) or erase without suppress_days.`;
          throw new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field: 'suppress_days', message }] });
        }
      }
      const job = await deps.jobs.submit(accountId, identifiers, suppressDays);
      await deps.audit.record(auditOrigin(request), {
        action: 'subject.erase_requested',
        target: { kind: 'subject_job', id: job.id },
        details: { identifiers: hints(identifiers), suppress_days: suppressDays },
      });
      return reply.code(202).send({ job: jobView(job) });
    },
  });

  app.get('/v1/subjects/jobs', {
    config: { access: 'subjects' },
    schema: {
      summary: "The account's erasure jobs, newest first (the last 100)",
      tags: ['subjects'],
      security: KeyAuth,
      response: { 200: JobsAnswer, ...ErrorResponses },
    },
    handler: async (request) => {
      const jobs = await deps.store.subjects.listJobs(requestAccount(request).account.id, 100);
      return { data: jobs.map(jobView) };
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/v1/subjects/jobs/:id', {
    config: { access: 'subjects' },
    schema: {
      summary: 'One erasure job: its status, progress and counts',
      tags: ['subjects'],
      security: KeyAuth,
      params: IdParams,
      response: { 200: JobAnswer, ...ErrorResponses },
    },
    handler: async (request) => {
      const job = await deps.store.subjects.getJob(requestAccount(request).account.id, request.params.id);
      if (job === undefined) throw new ApiError({ code: 'NOT_FOUND', message: `No erasure job ${request.params.id}.` });
      return { job: jobView(job) };
    },
  });

  app.get<{ Querystring: Static<typeof SuppressionQuery> }>('/v1/subjects/suppressions', {
    config: { access: 'subjects' },
    schema: {
      summary: "The account's suppression list in force (identifiers whose events are not kept), by id",
      tags: ['subjects'],
      security: KeyAuth,
      querystring: SuppressionQuery,
      response: { 200: SuppressionPage, ...ErrorResponses },
    },
    handler: async (request) => {
      const limit = pageLimit(request.query.limit);
      const rows = await deps.store.subjects.pageSuppressions(requestAccount(request).account.id, deps.clock.now(), request.query.cursor, limit + 1);
      const page = rows.slice(0, limit);
      return { data: page.map(suppressionView), next_cursor: rows.length > limit ? (page[page.length - 1] as SuppressionRow).hash : null };
    },
  });

  /** Removes rows, makes every instance load the list again, then audits each removal. */
  async function remove(request: FastifyRequest, accountId: string, hashes: readonly string[]): Promise<readonly SuppressionRow[]> {
    const removed = await deps.store.subjects.removeSuppressions(accountId, hashes);
    if (removed.length === 0) return removed;
    await deps.suppressions.changed(accountId);
    for (const row of removed)
      await deps.audit.record(auditOrigin(request), {
        action: 'subject.suppression_removed',
        target: { kind: 'subject_suppression', id: row.hash },
        details: { kind: row.kind, expires_at: new Date(row.until).toISOString() },
      });
    return removed;
  }

  app.delete<{ Params: Static<typeof IdParams> }>('/v1/subjects/suppressions/:id', {
    config: { access: 'subjects' },
    schema: {
      summary: 'Removes one identifier from the suppression list: its events are kept again',
      tags: ['subjects'],
      security: KeyAuth,
      params: IdParams,
      response: { 200: Removed, ...ErrorResponses },
    },
    handler: async (request) => {
      const removed = await remove(request, requestAccount(request).account.id, [request.params.id]);
      if (removed.length === 0) throw new ApiError({ code: 'NOT_FOUND', message: `No suppression ${request.params.id}.` });
      return { removed: removed.map(suppressionView) };
    },
  });

  app.delete<{ Body: Static<typeof RemoveBody> }>('/v1/subjects/suppressions', {
    config: { access: 'subjects' },
    schema: {
      summary: 'Removes these identifiers from the suppression list (the ones listed): their events are kept again',
      tags: ['subjects'],
      security: KeyAuth,
      body: RemoveBody,
      response: { 200: Removed, ...ErrorResponses },
    },
    handler: async (request) => {
      const accountId = requestAccount(request).account.id;
      const entries = hashesOf(deps, accountId, identifiersOf(request.body), 'identifiers');
      const removed = await remove(
        request,
        accountId,
        entries.map((e) => e.hash),
      );
      return { removed: removed.map(suppressionView) };
    },
  });

  app.post<{ Body: Static<typeof ExportBody> }>('/v1/subjects/export', {
    config: { access: 'subjects' },
    schema: {
      summary: 'Every stored event, alert and note that mentions the identifiers, streamed as NDJSON (one {"type": "event"|"alert"|"note", …} a line)',
      tags: ['subjects'],
      security: KeyAuth,
      body: ExportBody,
      response: { ...ErrorResponses },
    },
    handler: async (request, reply) => {
      const accountId = requestAccount(request).account.id;
      const identifiers = identifiersOf(request.body);
      await deps.audit.record(auditOrigin(request), { action: 'subject.exported', details: { identifiers: hints(identifiers) } });
      const matcher = new SubjectMatcher(identifiers, deps.aliasesOf?.(accountId, identifiers) ?? []);
      async function* pages(): AsyncGenerator<Record<string, unknown>[]> {
        for await (const page of subjectRecords(deps.store, accountId, matcher)) {
          if (page.type === 'event') yield page.rows.map((row) => ({ ...eventView(row), type: 'event' }));
          else if (page.type === 'alert')
            yield (await alertViewsWithAssignees(deps.store.members, page.rows)).map((view) => ({
              ...(view as unknown as Record<string, unknown>),
              type: 'alert',
            }));
          else
            yield page.rows.map((n) => ({
              type: 'note',
              id: n.id,
              alert_id: n.alertId,
              status: n.status,
              note: n.note,
              created_at: new Date(n.createdAt).toISOString(),
              author: n.author,
            }));
        }
      }
      return sendExport(reply, 'subject', 'ndjson', [], pages(), deps.clock.now());
    },
  });
}
