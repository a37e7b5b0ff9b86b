// Where a failure group is on the dashboard (DESIGN: The dashboard, "Failure groups"): /failures
// filtered to its agent, scrolled to the group. One rule for the page, which gives each group this
// anchor, and for the alerts, which link to it.

/** The id of a group's element on /failures. */
export const failureGroupAnchor = (sig: string): string => `fg-${sig}`;

/** /failures filtered to `agent`, at the group `sig` when given. */
export function failureGroupPath(agent: string, sig?: string): string {
  return `/failures?agent=${encodeURIComponent(agent)}${sig ? `#${failureGroupAnchor(sig)}` : ''}`;
}
