-- CreateTable
CREATE TABLE "logistics_object" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "types" TEXT[],
    "body" JSONB NOT NULL,
    "revision" INTEGER NOT NULL,
    "awb" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_modified" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "logistics_object_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "logistics_object_revision" (
    "object_id" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "body" JSONB NOT NULL,
    "types" TEXT[],
    "modified_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "action_request_id" UUID,

    CONSTRAINT "logistics_object_revision_pkey" PRIMARY KEY ("object_id","revision")
);

-- CreateTable
CREATE TABLE "action_request" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "object_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "requested_by" TEXT NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),
    "reason" TEXT,
    "revision" INTEGER NOT NULL,

    CONSTRAINT "action_request_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "logistics_event" (
    "object_id" TEXT NOT NULL,
    "id" UUID NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "event_code" TEXT,
    "event_date" TIMESTAMPTZ(3) NOT NULL,
    "creation_date" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "body" JSONB NOT NULL,
    "created_by" TEXT NOT NULL,

    CONSTRAINT "logistics_event_pkey" PRIMARY KEY ("object_id","id")
);

-- CreateIndex
CREATE INDEX "logistics_object_awb_idx" ON "logistics_object"("awb");

-- CreateIndex
CREATE INDEX "logistics_object_type_idx" ON "logistics_object"("type");

-- CreateIndex
CREATE INDEX "action_request_object_id_requested_at_idx" ON "action_request"("object_id", "requested_at");

-- CreateIndex
CREATE UNIQUE INDEX "logistics_event_seq_key" ON "logistics_event"("seq");

-- CreateIndex
CREATE INDEX "logistics_event_object_id_event_date_idx" ON "logistics_event"("object_id", "event_date");

-- CreateIndex
CREATE INDEX "logistics_event_object_id_creation_date_idx" ON "logistics_event"("object_id", "creation_date");

-- AddForeignKey
ALTER TABLE "logistics_object_revision" ADD CONSTRAINT "logistics_object_revision_object_id_fkey" FOREIGN KEY ("object_id") REFERENCES "logistics_object"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "action_request" ADD CONSTRAINT "action_request_object_id_fkey" FOREIGN KEY ("object_id") REFERENCES "logistics_object"("id") ON DELETE CASCADE ON UPDATE CASCADE;
