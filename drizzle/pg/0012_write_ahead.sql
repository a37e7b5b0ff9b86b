ALTER TABLE "attempts" ADD COLUMN "in_flight_try" integer;--> statement-breakpoint
ALTER TABLE "attempts" ADD COLUMN "in_flight_at" bigint;