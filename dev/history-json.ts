import path from 'node:path';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

type History = proto.temporal.api.history.v1.IHistory;

interface ProtoJson {
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
  toJson(type: unknown, message: unknown): unknown;
}

/*
 * Temporal's standard JSON form of a history (as `temporal workflow show --output json` writes it).
 * historyToJSON/historyFromJSON of @temporalio/common fail in this install ("type must be a Type"): protobufjs 7
 * is hoisted for @grpc/proto-loader, so @temporalio/common and @temporalio/proto each get their own nested
 * protobufjs 8 and the proto types of one are not instances of the other's. Loading protojson from the copy
 * that @temporalio/proto uses works in either layout.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a path resolved at run time, see above
const protojson = require(
  require.resolve('protobufjs/ext/protojson', {
    paths: [path.dirname(require.resolve('@temporalio/proto'))],
  }),
) as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType(
  'temporal.api.history.v1.History',
);

export function historyToJson(history: History): string {
  const message = proto.temporal.api.history.v1.History.fromObject(history);
  return `${JSON.stringify(protojson.toJson(historyType, message), null, 1)}\n`;
}

export function historyFromJson(text: string): History {
  return protojson.fromJson(historyType, JSON.parse(text), { ignoreUnknownFields: true }) as History;
}

/** The history as protobuf bytes: payloads appear there as sent, so a leaked secret cannot hide in base64. */
export function historyBytes(history: History): Buffer {
  return Buffer.from(proto.temporal.api.history.v1.History.encode(history).finish());
}
