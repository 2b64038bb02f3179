// Routines and their runs. Inputs and outputs are derived from the zod schemas of
// src/routines/contract.ts (the ones REST validates with and OpenAPI documents); resolvers
// return the spec-shaped views of src/routines/view.ts.
import { builder } from './builder.js';
import type { Viewer } from '../auth/viewer.js';
import { prisma } from '../db/client.js';
import type { Routine } from '../generated/prisma/client.js';
import { createRoutine, patchRoutine, pauseRoutine, resumeRoutine, archiveRoutine, findRoutine, listRoutines, runnableRoutine } from '../routines/routines.js';
import { fireRoutine } from '../routines/fire.js';
import { routineView, routineRunViews } from '../routines/view.js';
import { createRoutineBody, patchRoutineBody, routineBody, routineRunBody } from '../routines/contract.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { newestFirst } from './id-connection.js';

const RoutineType = objectOf(routineBody);
const RoutineRunType = objectOf(routineRunBody);
const PAGE = { defaultSize: 100, maxSize: 1000 };

builder.queryField('routines', (t) =>
  t.connection({
    type: RoutineType,
    description: 'Routines of the universe, newest first',
    authScopes: { read: true },
    resolve: (_r, args, ctx) => newestFirst(args, PAGE, async (page) => (await listRoutines(ctx.viewer!, page)).map(routineView)),
  }),
);
builder.queryField('routine', (t) =>
  t.field({
    type: RoutineType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { id }, ctx) => routineView(await findRoutine(ctx.viewer!, id)),
  }),
);
builder.queryField('routineRuns', (t) =>
  t.connection({
    type: RoutineRunType,
    description: 'Runs of a routine, newest first',
    args: { routineId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, args, ctx) => {
      const routine = await findRoutine(ctx.viewer!, args.routineId);
      return newestFirst(
        args,
        PAGE,
        async (page) =>
          await routineRunViews(await prisma.routineRun.findMany({ where: { routineId: routine.id, ...page.where }, orderBy: page.orderBy, take: page.take })),
      );
    },
  }),
);

builder.mutationField('createRoutine', (t) =>
  t.field({
    type: RoutineType,
    description: 'Create a routine (cron schedule or manual-only)',
    args: { input: t.arg({ type: inputOf(createRoutineBody, 'CreateRoutine'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => routineView(await createRoutine(ctx.viewer!, takeInput(ctx, createRoutineBody, input))),
  }),
);
builder.mutationField('updateRoutine', (t) =>
  t.field({
    type: RoutineType,
    description: 'Update a routine; every field optional (description, metadata values, schedule and budget nullable)',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchRoutineBody, 'UpdateRoutine'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id, input }, ctx) => routineView(await patchRoutine(ctx.viewer!, id, takeInput(ctx, patchRoutineBody, input))),
  }),
);

const verb = (name: string, description: string, fn: (viewer: Viewer, id: string) => Promise<Routine>) =>
  builder.mutationField(name, (t) =>
    t.field({
      type: RoutineType,
      description,
      args: { id: t.arg.string({ required: true }) },
      authScopes: { write: true },
      resolve: async (_r, { id }, ctx) => routineView(await fn(ctx.viewer!, id)),
    }),
  );
verb('pauseRoutine', 'Pause the routine (paused_reason manual)', pauseRoutine);
verb('resumeRoutine', 'Resume a paused routine from the next occurrence', resumeRoutine);
verb('archiveRoutine', 'Archive the routine (no more fires; upcoming runs empty)', archiveRoutine);

builder.mutationField('runRoutine', (t) =>
  t.field({
    type: RoutineRunType,
    description: 'Fire the routine now (trigger_context manual)',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => (await routineRunViews([await fireRoutine((await runnableRoutine(ctx.viewer!, id)).id, { type: 'manual' })]))[0]!,
  }),
);
