ALTER TABLE "check_runs" ADD COLUMN "summary" text;--> statement-breakpoint
ALTER TABLE "check_runs" ADD COLUMN "output_text" text;