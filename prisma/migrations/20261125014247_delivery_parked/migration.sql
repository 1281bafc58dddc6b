-- AlterEnum
ALTER TYPE "delivery_status" ADD VALUE 'PARKED';
