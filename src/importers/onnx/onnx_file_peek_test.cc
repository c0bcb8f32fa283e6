// The on-demand reads of an ONNX file (onnx_file_peek.h): the header
// fields, and the values of initializers in every encoding ONNX allows
// (raw little-endian bytes, the typed repeated fields packed or not), on
// models built here with libonnx's protobuf API; the expected values are
// the ones the test writes in.

#include "importers/onnx/onnx_file_peek.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace mi::importers::onnx_import {
namespace {

std::string Write(const ::onnx::ModelProto& model, const std::string& name) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  model.SerializeToOstream(&out);
  return path;
}

::onnx::TensorProto* AddInit(::onnx::ModelProto* m, const std::string& name,
                             int32_t type, std::vector<int64_t> dims) {
  auto* t = m->mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

::onnx::ModelProto Model() {
  ::onnx::ModelProto m;
  m.set_ir_version(9);
  m.set_producer_name("peek");
  m.set_producer_version("2.0");
  m.set_domain("org.test");
  m.set_model_version(4);
  m.set_doc_string("doc");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  op = m.add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
  auto* p = m.add_metadata_props();
  p->set_key("k");
  p->set_value("v");
  m.mutable_graph()->set_name("g");
  return m;
}

TEST(OnnxFilePeekTest, ReadsTheHeader) {
  auto h = ReadOnnxModelHeader(Write(Model(), "peek_header.onnx"));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->ir_version, 9);
  EXPECT_EQ(h->producer_name, "peek");
  EXPECT_EQ(h->producer_version, "2.0");
  EXPECT_EQ(h->domain, "org.test");
  EXPECT_EQ(h->model_version, 4);
  EXPECT_EQ(h->doc_string, "doc");
  ASSERT_EQ(h->opset_imports.size(), 2u);
  EXPECT_EQ(h->opset_imports[1].first, "com.microsoft");
  EXPECT_EQ(h->opset_imports[1].second, 1);
  ASSERT_EQ(h->metadata_props.size(), 1u);
  EXPECT_EQ(h->metadata_props[0].first, "k");
  EXPECT_EQ(h->metadata_props[0].second, "v");
}

TEST(OnnxFilePeekTest, ReadsEveryEncoding) {
  ::onnx::ModelProto m = Model();
  // float_data (packed fixed32).
  auto* f = AddInit(&m, "f", ::onnx::TensorProto::FLOAT, {2, 2});
  for (float v : {1.5f, -2.0f, 0.25f, 8.0f}) f->add_float_data(v);
  // int32_data holding int8 values, negative ones included.
  auto* i8 = AddInit(&m, "i8", ::onnx::TensorProto::INT8, {3});
  for (int v : {-128, 7, 127}) i8->add_int32_data(v);
  // int64_data.
  auto* i64 = AddInit(&m, "i64", ::onnx::TensorProto::INT64, {2});
  i64->add_int64_data(int64_t{1} << 53 | 1);  // exact beyond double
  i64->add_int64_data(-5);
  // double_data.
  auto* d = AddInit(&m, "d", ::onnx::TensorProto::DOUBLE, {2});
  d->add_double_data(0.1);
  d->add_double_data(-1e300);
  // uint64_data holding uint64 values.
  auto* u = AddInit(&m, "u", ::onnx::TensorProto::UINT64, {1});
  u->add_uint64_data(UINT64_MAX);
  // raw bfloat16: 1.0 = 0x3f80, -3.0 = 0xc040.
  auto* bf = AddInit(&m, "bf", ::onnx::TensorProto::BFLOAT16, {2});
  const uint16_t bits[] = {0x3f80, 0xc040};
  bf->set_raw_data(std::string(reinterpret_cast<const char*>(bits), 4));
  // raw float16: 0.5 = 0x3800, -65504 = 0xfbff, NaN = 0x7e00.
  auto* h = AddInit(&m, "h", ::onnx::TensorProto::FLOAT16, {3});
  const uint16_t half[] = {0x3800, 0xfbff, 0x7e00};
  h->set_raw_data(std::string(reinterpret_cast<const char*>(half), 6));
  // A string tensor: not peeked.
  auto* s = AddInit(&m, "s", ::onnx::TensorProto::STRING, {1});
  s->add_string_data("x");
  std::string path = Write(m, "peek_values.onnx");

  auto p = PeekOnnxInitializer(path, "f", 10, 10);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->storage, "float_data");
  EXPECT_EQ(p->dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(p->element_count, 4u);
  EXPECT_EQ(p->floats, (std::vector<double>{1.5, -2.0, 0.25, 8.0}));
  EXPECT_EQ(p->min, -2.0);
  EXPECT_EQ(p->max, 8.0);
  EXPECT_EQ(p->mean, (1.5 - 2.0 + 0.25 + 8.0) / 4);

  // Two values shown, statistics over the first three.
  p = PeekOnnxInitializer(path, "f", 2, 3);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->floats, (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(p->stats_count, 3u);
  EXPECT_EQ(p->max, 1.5);

  p = PeekOnnxInitializer(path, "i8", 10, 10);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->storage, "int32_data");
  EXPECT_EQ(p->ints, (std::vector<int64_t>{-128, 7, 127}));

  p = PeekOnnxInitializer(path, "i64", 10, 10);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->ints, (std::vector<int64_t>{(int64_t{1} << 53) | 1, -5}));

  p = PeekOnnxInitializer(path, "d", 10, 10);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->floats, (std::vector<double>{0.1, -1e300}));

  p = PeekOnnxInitializer(path, "u", 10, 10);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->uints, (std::vector<uint64_t>{UINT64_MAX}));

  p = PeekOnnxInitializer(path, "bf", 10, 10);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->storage, "raw_data");
  EXPECT_EQ(p->floats, (std::vector<double>{1.0, -3.0}));

  p = PeekOnnxInitializer(path, "h", 10, 10);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->floats.size(), 3u);
  EXPECT_EQ(p->floats[0], 0.5);
  EXPECT_EQ(p->floats[1], -65504.0);
  EXPECT_TRUE(p->floats[2] != p->floats[2]);  // NaN
  EXPECT_EQ(p->nan_count, 1u);
  EXPECT_EQ(p->min, -65504.0);
  EXPECT_EQ(p->max, 0.5);

  EXPECT_EQ(PeekOnnxInitializer(path, "s", 10, 10).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(PeekOnnxInitializer(path, "none", 10, 10).status().code(),
            StatusCode::kNotFound);
}

TEST(OnnxFilePeekTest, TruncatedFileSaysWhere) {
  ::onnx::ModelProto m = Model();
  auto* f = AddInit(&m, "f", ::onnx::TensorProto::FLOAT, {64});
  f->set_raw_data(std::string(256, '\0'));
  std::string bytes = m.SerializeAsString();
  std::string path = ::testing::TempDir() + "/peek_truncated.onnx";
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 100));
  auto p = PeekOnnxInitializer(path, "f", 10, 10);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("@byte"), std::string::npos)
      << p.status().ToString();
}

TEST(OnnxFilePeekTest, ExternalDataWithABadOffsetSaysSo) {
  ::onnx::ModelProto m = Model();
  auto* f = AddInit(&m, "w", ::onnx::TensorProto::FLOAT, {2});
  f->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* e = f->add_external_data();
  e->set_key("location");
  e->set_value("w.bin");
  e = f->add_external_data();
  e->set_key("offset");
  e->set_value("99999999999999999999999");  // past uint64
  std::string path = Write(m, "peek_bad_offset.onnx");
  auto p = PeekOnnxInitializer(path, "w", 10, 10);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kMalformedInput);
  EXPECT_NE(p.status().message().find("expected a byte count"),
            std::string::npos)
      << p.status().ToString();
}

}  // namespace
}  // namespace mi::importers::onnx_import
