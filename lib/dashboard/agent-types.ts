// Shapes the /agents pages pass from server to components (type-only over db/agent-queries).
export type { AgentStats as AgentStatsView, AgentModelStats, AgentFailure } from '@/db/agent-queries';
export type { PolicyRevisionRow as PolicyRevisionView } from '@/db/schema';
