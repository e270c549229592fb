/* NCCL-like NVTX payloads, built against the toolkit's NVTX headers: a
 * domain "NCCL", an enum for the reduction op and static schemas
 * registered as NCCL registers them (entry offsets left 0 for the tool to
 * lay out with natural alignment), then payload ranges pushed in it.
 * argv[1]: iterations.  argv[2], when given: then one more ncclAllReduce
 * (1 MiB, Max), inside a range of an unknown schema, inside which the program calls cudaStreamSynchronize from
 * libcudart.so.13 (dlopen: the stand-in's STANDIN_SYNC_SLEEP_* make it
 * block), as a rank waits inside NCCL (test/integration/live_payload.sh). */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define SID_CommInitRank (NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 0)
#define SID_AllReduce (NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5)
#define SID_Send (NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 9)
#define SID_Unknown (NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 40)
#define SID_RedOp (NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 11)

struct all_reduce {
	uint64_t comm;
	size_t bytes;
	int op;
};
struct send {
	uint64_t comm;
	size_t bytes;
	int peer;
};
struct init_rank {
	uint64_t comm;
	int nranks, myrank, cudaDev;
};

static nvtxDomainHandle_t dom;

static void reg(uint64_t id, const nvtxPayloadSchemaEntry_t *e, size_t n, size_t size)
{
	nvtxPayloadSchemaAttr_t a = { 0 };
	a.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
		      NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
		      NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE |
		      NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
	a.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
	a.entries = e;
	a.numEntries = n;
	a.payloadStaticSize = size;
	a.schemaId = id;
	nvtxPayloadSchemaRegister(dom, &a);
}

static void push(const char *name, uint64_t sid, const void *p, size_t size)
{
	nvtxEventAttributes_t ev = { 0 };
	ev.version = NVTX_VERSION;
	ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	ev.messageType = NVTX_MESSAGE_TYPE_ASCII;
	ev.message.ascii = name;
	nvtxPayloadData_t pd = { sid, size, p };
	ev.payloadType = NVTX_PAYLOAD_TYPE_EXT;
	ev.reserved0 = 1;
	ev.payload.ullValue = (uint64_t)(uintptr_t)&pd;
	nvtxDomainRangePushEx(dom, &ev);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	dom = nvtxDomainCreateA("NCCL");
	static const nvtxPayloadEnum_t ops[] = {
		{ "Sum", 0, 0 }, { "Prod", 1, 0 }, { "Max", 2, 0 }, { "Min", 3, 0 }, { "Avg", 4, 0 },
	};
	nvtxPayloadEnumAttr_t ea = { 0 };
	ea.fieldMask = NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES |
		       NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE | NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID;
	ea.entries = ops;
	ea.numEntries = 5;
	ea.sizeOfEnum = sizeof(int);
	ea.schemaId = SID_RedOp;
	nvtxPayloadEnumRegister(dom, &ea);

	static const nvtxPayloadSchemaEntry_t ar[] = {
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", NULL, 0, 0, NULL, NULL },
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", NULL, 0, 0, NULL, NULL },
		{ 0, SID_RedOp, "Reduction operation", NULL, 0, 0, NULL, NULL },
	};
	static const nvtxPayloadSchemaEntry_t sd[] = {
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", NULL, 0, 0, NULL, NULL },
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", NULL, 0, 0, NULL, NULL },
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Peer rank", NULL, 0, 0, NULL, NULL },
	};
	static const nvtxPayloadSchemaEntry_t ir[] = {
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", NULL, 0, 0, NULL, NULL },
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "No. of ranks", NULL, 0, 0, NULL, NULL },
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Rank", NULL, 0, 0, NULL, NULL },
		{ 0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "CUDA device", NULL, 0, 0, NULL, NULL },
	};
	reg(SID_AllReduce, ar, 3, sizeof(struct all_reduce));
	reg(SID_Send, sd, 3, sizeof(struct send));
	reg(SID_CommInitRank, ir, 4, sizeof(struct init_rank));

	struct init_rank i = { 0xabc123, 8, 3, 1 };
	push("ncclCommInitRank", SID_CommInitRank, &i, sizeof(i));
	nvtxDomainRangePop(dom);
	for (int k = 0; k < n; k++) {
		struct all_reduce a = { 0xabc123, 4096u << k, k % 2 ? 2 : 0 };
		push("ncclAllReduce", SID_AllReduce, &a, sizeof(a));
		nvtxDomainRangePop(dom);
		struct send s = { 0xabc123, 1024, 5 };
		push("ncclSend", SID_Send, &s, sizeof(s));
		nvtxDomainRangePop(dom);
	}
	if (argc > 2) {
		int (*sync)(void *) = NULL;
		void *h = dlopen("libcudart.so.13", RTLD_NOW);
		if (h)
			*(void **)&sync = dlsym(h, "cudaStreamSynchronize");
		/* Inside a range whose schema is unknown: decoded once
		 * (counted once), however long the live file shows it. */
		int y = 9;
		push("unknown_outer", SID_Unknown, &y, sizeof(y));
		struct all_reduce a = { 0xabc123, 1u << 20, 2 };
		push("ncclAllReduce", SID_AllReduce, &a, sizeof(a));
		if (!sync || sync(NULL) != 0)
			puts("no cudaStreamSynchronize");
		nvtxDomainRangePop(dom);
		nvtxDomainRangePop(dom);
	}
	/* A schema never registered: the range stays, its payload is counted. */
	int x = 7;
	push("unknown_schema", SID_Unknown, &x, sizeof(x));
	nvtxDomainRangePop(dom);
	puts("done");
	return 0;
}
