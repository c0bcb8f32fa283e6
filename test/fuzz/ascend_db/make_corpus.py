#!/usr/bin/env python3
"""Writes the seed corpus of ascend_db_fuzzer (run with Debian's python3 from
this folder; the files are committed, so run it only to change them).

Small SQLite databases (512-byte pages) with the schema of torch_npu's DB
export as found in the real samples (shared/formats/cluster.md 1.3, 1.4):
a 2025-style profiler DB (HCCL group name, waitNs, depth), a 2024-style one
(group hash, no waitNs), an analysis.db with the four tables, one file
with both sets of tables (the analysis rows then join the records), a
WAL-mode copy, and two broken files (the first page only; not SQLite)."""
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))

PROFILER = """
CREATE TABLE STRING_IDS(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO STRING_IDS VALUES (1,'hcom_allReduce__210_0_1'),
 (2,'90.91.105.46%enp189s0f0_60000_0_1736410538306028'),(3,'hcom_allReduce_'),
 (4,'MESH-RING'),(5,'Notify Wait'),(6,'launch'),(7,'SDMA'),(8,'KERNEL_AIVEC'),
 (9,'aclnnMuls_MulAiCore_Mul'),(10,'AI_VECTOR_CORE'),(11,'Mul'),
 (12,'6071070343286431307'),(13,'aclnnMuls');
CREATE TABLE ENUM_API_TYPE(id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_API_TYPE VALUES (5000,'runtime'),(5500,'hccl'),(10000,'node'),
 (15000,'model'),(20000,'acl');
CREATE TABLE ENUM_HCCL_DATA_TYPE(id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_HCCL_DATA_TYPE VALUES (3,'FP16'),(4,'FP32'),(11,'BFP16');
CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER,
 connectionId INTEGER, globalTaskId INTEGER, globalPid INTEGER,
 taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER,
 modelId INTEGER{depth});
INSERT INTO TASK VALUES
 (1736410576400000000,1736410576400001000,0,936,1,3136493,8,4294967295,2,11,4294967295{d0}),
 (1736410576431631806,1736410576431700000,0,1175,2,3136493,5,4294967295,4,12,4294967295{d0}),
 (1736410576431700000,1736410576520382799,0,1175,3,3136493,7,4294967295,4,13,4294967295{d0});
CREATE TABLE COMPUTE_TASK_INFO(name INTEGER, globalTaskId INTEGER,
 blockDim INTEGER, mixBlockDim INTEGER, taskType INTEGER, opType INTEGER);
INSERT INTO COMPUTE_TASK_INFO VALUES (9,1,8,0,10,11);
CREATE TABLE COMMUNICATION_TASK_INFO(name INTEGER, globalTaskId INTEGER,
 taskType INTEGER, planeId INTEGER, groupName INTEGER, size INTEGER,
 opId INTEGER);
INSERT INTO COMMUNICATION_TASK_INFO VALUES (1,2,5,0,2,4,1),(1,3,7,0,2,2064384,1);
CREATE TABLE CANN_API(startNs INTEGER, endNs INTEGER, type INTEGER,
 globalTid INTEGER, connectionId INTEGER, name INTEGER{depth});
INSERT INTO CANN_API VALUES
 (1736410576395215600,1736410576395252400,20000,13471134862272974,936,13{d0}),
 (1736410576395300000,1736410576395310000,10000,13471134862272974,936,6{d0}),
 (1736410576431000000,1736410576431100000,10000,13471134862272974,1175,6{d0});
CREATE TABLE COMMUNICATION_OP(opName INTEGER, startNs INTEGER, endNs INTEGER,
 connectionId INTEGER, groupName INTEGER, opId INTEGER, relay INTEGER,
 retry INTEGER, dataType INTEGER, algType INTEGER, count INTEGER,
 opType INTEGER{wait});
INSERT INTO COMMUNICATION_OP VALUES (1,1736410576431631806,1736410576520382799,
 1175,{group},1,0,0,4,4,4097000,3{w0});
CREATE TABLE STEP_TIME(id INTEGER, startNs INTEGER, endNs INTEGER);
INSERT INTO STEP_TIME VALUES (50,1736410576386409710,1736410576538298460);
CREATE TABLE RANK_DEVICE_MAP(rankId INTEGER, deviceId INTEGER);
INSERT INTO RANK_DEVICE_MAP VALUES (0,0);
CREATE TABLE HOST_INFO(hostUid TEXT, hostName TEXT);
INSERT INTO HOST_INFO VALUES ('3538958389648580163','ubuntu');
CREATE TABLE META_DATA(name TEXT, value TEXT);
INSERT INTO META_DATA VALUES ('SCHEMA_VERSION','1.0.0'),('parallel_group_info',
 '{{"90.91.105.46%enp189s0f0_60000_0_1736410538306028": {{"group_name": "dp",
 "group_rank": 0, "global_ranks": [0, 1]}}}}');
"""

ANALYSIS = """
CREATE TABLE StepTraceTime(step TEXT, computing REAL,
 communication_not_overlapped REAL, overlapped REAL, communication REAL,
 free REAL, stage REAL, bubble REAL,
 communication_not_overlapped_and_exclude_receive REAL, preparing REAL);
INSERT INTO StepTraceTime VALUES ('50',8903.431,98071.947,4036.153,102108.1,
 25258.144,132233.522,0,98071.947,18055.693);
CREATE TABLE CommAnalyzerTime(hccl_op_name TEXT, group_name TEXT,
 start_timestamp REAL, elapse_time REAL, transit_time REAL, wait_time REAL,
 synchronization_time REAL, idle_time REAL, step TEXT, type TEXT);
INSERT INTO CommAnalyzerTime VALUES ('hcom_allReduce__210_0_1',
 '17148521525495523210',1736410576431650,88.75099321875,0.22856459375,
 3.56889128125,3.51773028125,84.95353734375,'step50','collective'),
 ('hcom_broadcast__210_9_1','17148521525495523210',1736410576531650,0.5,0.2,
 0.1,0,0.2,'step50','collective');
CREATE TABLE CommAnalyzerBandwidth(hccl_op_name TEXT, group_name TEXT,
 transport_type TEXT, transit_size REAL, transit_time REAL, bandwidth REAL,
 large_packet_ratio REAL, package_size REAL, count INTEGER,
 total_duration REAL, step TEXT, type TEXT);
INSERT INTO CommAnalyzerBandwidth VALUES ('hcom_allReduce__210_0_1',
 '17148521525495523210','HCCS',28.647232,1.82189634375,15.7239,0,2.064384,12,
 1.58139153125,'step50','collective'),('hcom_allReduce__210_0_1',
 '17148521525495523210','HCCS',28.647232,1.82189634375,15.7239,0,1.937312,2,
 0.2405048125,'step50','collective');
CREATE TABLE CommAnalyzerMatrix(hccl_op_name TEXT, group_name TEXT,
 src_rank INTEGER, dst_rank INTEGER, transport_type TEXT, transit_size REAL,
 transit_time REAL, bandwidth REAL, step TEXT, type TEXT, op_name TEXT);
INSERT INTO CommAnalyzerMatrix VALUES ('allreduce-top1','17148521525495523210',
 0,1,'HCCS',37.781504,2.23410465625,16.9113,'step50','collective',
 'hcom_allReduce__210_2_1');
"""


def write(name, script, wal=False):
    path = os.path.join(HERE, name)
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size=512")
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    db.executescript(script)
    db.commit()
    if wal:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return path


def profiler(style):
    if style == 2025:
        return PROFILER.format(depth=", depth INTEGER", d0=",0",
                               wait=", waitNs INTEGER", w0=",693394", group=2)
    return PROFILER.format(depth="", d0="", wait="", w0="", group=12)


write("profiler_2025.db", profiler(2025))
write("profiler_2024.db", profiler(2024))
write("analysis.db", ANALYSIS)
write("profiler_and_analysis.db", profiler(2025) + ANALYSIS)
write("profiler_wal.db", profiler(2024), wal=True)
with open(os.path.join(HERE, "profiler_2025.db"), "rb") as f:
    head = f.read(512)
with open(os.path.join(HERE, "first_page_only.db"), "wb") as f:
    f.write(head)
with open(os.path.join(HERE, "not_sqlite.db"), "wb") as f:
    f.write(b"step,computing\n50,1.0\n")
