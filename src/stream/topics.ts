/**
 * What a stream filters events by: their topic. An event's topic is its
 * type, but for a record that the callers of its type's route would not be
 * answered as the event shows it, when it is written: a temporary item
 * outside its dates (get-active-items answers startDate <= now < endDate),
 * whose topic is its type with RESTRICTED after it. Who may see each topic:
 * resources/events/visibility.ts (docs/SECURITY.md, "Who sees which event").
 */
export const RESTRICTED = "!";

/** The topic of an event of this type, with this data (the record as JSON text), written at `createdAt`. */
export function topicOf(type: string, data: string, createdAt: Date): string {
  if (!type.startsWith("temporary_item.")) return type;
  const item = JSON.parse(data) as { startDate?: unknown; endDate?: unknown };
  const at = createdAt.getTime();
  const active = Date.parse(String(item.startDate)) <= at && at < Date.parse(String(item.endDate));
  return active ? type : `${type}${RESTRICTED}`;
}

/** The type of a topic: what the outbox is read by. */
export const typeOf = (topic: string) => (topic.endsWith(RESTRICTED) ? topic.slice(0, -RESTRICTED.length) : topic);
