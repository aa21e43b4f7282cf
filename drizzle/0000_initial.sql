CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"kind" text NOT NULL,
	"project_id" text,
	"name" text NOT NULL,
	"digest" text NOT NULL,
	"hint" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "check_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"pull_request_id" text NOT NULL,
	"head_sha" text NOT NULL,
	"external_id" text,
	"status" text NOT NULL,
	"conclusion" text,
	"title" text DEFAULT '' NOT NULL,
	"review_task_id" text,
	"review_run_id" text,
	"deadline_at" timestamp with time zone,
	"deadline_passed" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dashboards" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"is_default" boolean DEFAULT false NOT NULL,
	"panels" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text,
	"object_type" text NOT NULL,
	"object_id" text NOT NULL,
	"kind" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"actor" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "findings" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"ledger_key" text NOT NULL,
	"pull_request_id" text,
	"fingerprint" text NOT NULL,
	"status" text NOT NULL,
	"severity" text NOT NULL,
	"path" text NOT NULL,
	"line" integer NOT NULL,
	"end_line" integer NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"rule" text NOT NULL,
	"category" text NOT NULL,
	"reviewers" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"suggestion" text,
	"anchor_text" text NOT NULL,
	"task_id" text NOT NULL,
	"first_run_id" text NOT NULL,
	"last_run_id" text NOT NULL,
	"commit_sha" text,
	"dismissed_reason" text,
	"dismissed_at" timestamp with time zone,
	"fixed_at" timestamp with time zone,
	"fixed_run_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_records" (
	"holder" text NOT NULL,
	"key" text NOT NULL,
	"workspace_id" text NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"request_hash" text NOT NULL,
	"state" text NOT NULL,
	"response_status" integer,
	"response_body" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_records_holder_key_pk" PRIMARY KEY("holder","key")
);
--> statement-breakpoint
CREATE TABLE "installations" (
	"id" integer PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"kind" text DEFAULT 'github' NOT NULL,
	"account_login" text NOT NULL,
	"account_type" text,
	"repositories" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"suspended_at" timestamp with time zone,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "learnings" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"learning" text NOT NULL,
	"why" text DEFAULT '' NOT NULL,
	"learned_at" timestamp with time zone DEFAULT now() NOT NULL,
	"forgets_at" timestamp with time zone,
	"scope" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "metric_records" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"owner" text NOT NULL,
	"key" text NOT NULL,
	"value" jsonb NOT NULL,
	"written_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plans" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"status" text DEFAULT 'discovered' NOT NULL,
	"approval_status" text DEFAULT 'pending' NOT NULL,
	"requires_approval" boolean DEFAULT true NOT NULL,
	"repo_write_mode" text DEFAULT 'draft_pr' NOT NULL,
	"repo_write_status" text DEFAULT 'not_requested' NOT NULL,
	"source_kind" text NOT NULL,
	"repo_artifact_path" text,
	"target_outcome" text,
	"summary" text,
	"review_task_id" text,
	"score" jsonb,
	"draft_pull_request_number" integer,
	"draft_pull_request_url" text,
	"repo_write_error" text,
	"superseded_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "posted_comments" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"pull_request_id" text NOT NULL,
	"kind" text NOT NULL,
	"finding_id" text,
	"external_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "preferences" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"key_id" text NOT NULL,
	"notifications_read_at" timestamp with time zone,
	"notifications_cleared_at" timestamp with time zone,
	"dashboard_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"repo_full_name" text NOT NULL,
	"installation_id" integer NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"merges_since_study" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pull_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"number" integer NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"author" text,
	"draft" boolean DEFAULT false NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"base_ref" text,
	"head_ref" text,
	"base_sha" text,
	"head_sha" text,
	"review_status" text,
	"last_reviewed_at" timestamp with time zone,
	"last_review_run_id" text,
	"auto_review" boolean DEFAULT true NOT NULL,
	"auto_review_off_reason" text,
	"merged_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "quick_actions" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"scorecard_id" text NOT NULL,
	"kind" text NOT NULL,
	"check" text NOT NULL,
	"title" text NOT NULL,
	"does" text NOT NULL,
	"operation" jsonb,
	"why_no_operation" text,
	"change" jsonb,
	"status" text DEFAULT 'available' NOT NULL,
	"task_id" text,
	"result" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "repo_knowledge" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"content" jsonb NOT NULL,
	"gaps" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"commit_sha" text NOT NULL,
	"refreshed_by" text NOT NULL,
	"refreshed_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "review_results" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"task_id" text NOT NULL,
	"run_id" text NOT NULL,
	"pull_request_id" text,
	"base_sha" text NOT NULL,
	"head_sha" text NOT NULL,
	"lineup" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"plan" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"counts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"gaps" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reviewer_model_stats" (
	"workspace_id" text NOT NULL,
	"reviewer_id" text NOT NULL,
	"model" text NOT NULL,
	"runs" integer DEFAULT 0 NOT NULL,
	"findings" integer DEFAULT 0 NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"total_ms" integer DEFAULT 0 NOT NULL,
	"cost_usd" numeric(14, 6),
	"last_used_at" timestamp with time zone,
	CONSTRAINT "reviewer_model_stats_workspace_id_reviewer_id_model_pk" PRIMARY KEY("workspace_id","reviewer_id","model")
);
--> statement-breakpoint
CREATE TABLE "reviewers" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"engine" text NOT NULL,
	"skill_id" text NOT NULL,
	"skill_revision_id" text,
	"model_pin" text NOT NULL,
	"instructions" text,
	"source" text NOT NULL,
	"uses" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reviewers_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "run_findings" (
	"run_id" text NOT NULL,
	"finding_id" text NOT NULL,
	CONSTRAINT "run_findings_run_id_finding_id_pk" PRIMARY KEY("run_id","finding_id")
);
--> statement-breakpoint
CREATE TABLE "run_messages" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"id" text NOT NULL,
	"run_id" text NOT NULL,
	"task_id" text NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"task_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"task_revision" integer DEFAULT 1 NOT NULL,
	"input" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"retry_of" text,
	"retry_count" integer DEFAULT 0 NOT NULL,
	"phase" text,
	"status_text" text,
	"current_step" text,
	"progress_pct" integer,
	"result" jsonb,
	"error" jsonb,
	"warnings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"gaps" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"usage" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"cost_usd" numeric(14, 6),
	"backend" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"limits" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"skills" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"seed_graph" jsonb,
	"terminal_event_count" integer DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"heartbeat_at" timestamp with time zone,
	"progress_at" timestamp with time zone,
	"available_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"queued_at" timestamp with time zone DEFAULT now() NOT NULL,
	"dequeued_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"first_token_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"runner_clock" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scorecard_checks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"scorecard_id" text NOT NULL,
	"check" text NOT NULL,
	"title" text NOT NULL,
	"category" text NOT NULL,
	"weight" integer NOT NULL,
	"result" text NOT NULL,
	"evidence" jsonb NOT NULL,
	"remedy" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scorecards" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"commit_sha" text,
	"knowledge_id" text,
	"score" integer,
	"level" integer NOT NULL,
	"next_level" jsonb,
	"counts" jsonb NOT NULL,
	"gaps" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"trigger" text NOT NULL,
	"task_id" text,
	"previous_scorecard_id" text,
	"computed_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "skill_revisions" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"skill_id" text NOT NULL,
	"hash" text NOT NULL,
	"base_catalog_hash" text,
	"files" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text,
	"kind" text NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"input" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"revision" integer DEFAULT 1 NOT NULL,
	"paused_reason" text,
	"parent_task_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"event" text NOT NULL,
	"action" text,
	"installation_id" integer,
	"repository" text,
	"payload" jsonb NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"task_id" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_rejections" (
	"reason" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"count" integer NOT NULL,
	"last_delivery_id" text,
	"last_event" text,
	"last_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_rejections_reason_hour_pk" PRIMARY KEY("reason","hour")
);
--> statement-breakpoint
CREATE TABLE "workers" (
	"id" text PRIMARY KEY NOT NULL,
	"hostname" text NOT NULL,
	"pid" integer NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL,
	"stopped_at" timestamp with time zone,
	"draining" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pull_requests" ADD CONSTRAINT "pull_requests_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_messages" ADD CONSTRAINT "run_messages_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_digest_idx" ON "api_keys" USING btree ("digest");--> statement-breakpoint
CREATE UNIQUE INDEX "check_runs_head_idx" ON "check_runs" USING btree ("pull_request_id","head_sha");--> statement-breakpoint
CREATE INDEX "dashboards_project_idx" ON "dashboards" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "dashboards_default_idx" ON "dashboards" USING btree ("project_id") WHERE is_default;--> statement-breakpoint
CREATE INDEX "events_object_idx" ON "events" USING btree ("object_type","object_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "findings_identity_idx" ON "findings" USING btree ("ledger_key","fingerprint");--> statement-breakpoint
CREATE INDEX "findings_project_idx" ON "findings" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "findings_last_run_idx" ON "findings" USING btree ("last_run_id");--> statement-breakpoint
CREATE INDEX "idempotency_expires_idx" ON "idempotency_records" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "learnings_project_idx" ON "learnings" USING btree ("project_id","forgets_at");--> statement-breakpoint
CREATE UNIQUE INDEX "metric_records_identity_idx" ON "metric_records" USING btree ("project_id","owner","key");--> statement-breakpoint
CREATE UNIQUE INDEX "plans_artifact_idx" ON "plans" USING btree ("project_id","repo_artifact_path");--> statement-breakpoint
CREATE UNIQUE INDEX "posted_comments_finding_idx" ON "posted_comments" USING btree ("pull_request_id","finding_id");--> statement-breakpoint
CREATE INDEX "posted_comments_external_idx" ON "posted_comments" USING btree ("external_id");--> statement-breakpoint
CREATE UNIQUE INDEX "preferences_owner_idx" ON "preferences" USING btree ("project_id","key_id");--> statement-breakpoint
CREATE INDEX "projects_workspace_idx" ON "projects" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "pull_requests_number_idx" ON "pull_requests" USING btree ("project_id","number");--> statement-breakpoint
CREATE INDEX "quick_actions_scorecard_idx" ON "quick_actions" USING btree ("scorecard_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "repo_knowledge_project_idx" ON "repo_knowledge" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "review_results_project_idx" ON "review_results" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "reviewers_uses_idx" ON "reviewers" USING btree ("workspace_id","uses");--> statement-breakpoint
CREATE INDEX "run_messages_task_idx" ON "run_messages" USING btree ("task_id","seq");--> statement-breakpoint
CREATE INDEX "runs_task_idx" ON "runs" USING btree ("task_id","created_at");--> statement-breakpoint
CREATE INDEX "runs_pending_idx" ON "runs" USING btree ("available_at","created_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "runs_running_lease_idx" ON "runs" USING btree ("lease_expires_at") WHERE status = 'running';--> statement-breakpoint
CREATE INDEX "runs_project_created_idx" ON "runs" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "scorecard_checks_check_idx" ON "scorecard_checks" USING btree ("scorecard_id","check");--> statement-breakpoint
CREATE INDEX "scorecards_project_idx" ON "scorecards" USING btree ("project_id","computed_at");--> statement-breakpoint
CREATE UNIQUE INDEX "skill_revisions_hash_idx" ON "skill_revisions" USING btree ("workspace_id","hash");--> statement-breakpoint
CREATE INDEX "tasks_project_idx" ON "tasks" USING btree ("workspace_id","project_id","kind","created_at");--> statement-breakpoint
CREATE INDEX "tasks_parent_idx" ON "tasks" USING btree ("parent_task_id") WHERE parent_task_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_received_idx" ON "webhook_deliveries" USING btree ("received_at");