import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AgentJob, AgentJobState, FollowUpRequest, SentFollowUpsOfRun } from './agent-job';
import type { ExportProgress } from './visitors-export';

/** Queue a follow-up message for the job; delivered in order, once per messageId. */
export const followUpSignal = defineSignal<[FollowUpRequest]>('followUp');

/** Send a follow-up and wait for the service's answer: the job as the service returned it. */
export const sendFollowUpUpdate = defineUpdate<AgentJob, [FollowUpRequest]>('sendFollowUp');

export const getStateQuery = defineQuery<AgentJobState>('getState');

/** The messageIds the job's runs sent (by key): what a new run of the closed job must not send again. */
export const getSentFollowUpsQuery = defineQuery<SentFollowUpsOfRun>('getSentFollowUps');

export const getProgressQuery = defineQuery<ExportProgress>('getProgress');
