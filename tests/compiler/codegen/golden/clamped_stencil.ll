; construct 0 (parallel_for)
; ModuleID = "qd_KEY"
target triple = "HOST"
target datalayout = "HOST"

define i64 @"qd_KEY_t0"(i8* %"args", i8* %"tmp", i64 %"chunk", i64 %"nchunks") nounwind "denormal-fp-math"="preserve-sign,preserve-sign"
{
entry:
  %".66" = getelementptr i8, i8* %"args", i64 24
  %".67" = bitcast i8* %".66" to i64*
  %"b.data" = load i64, i64* %".67"
  %".68" = inttoptr i64 %"b.data" to float*
  %".69" = getelementptr i8, i8* %"args", i64 40
  %".70" = bitcast i8* %".69" to i64*
  %"b.shape0" = load i64, i64* %".70"
  %".34" = getelementptr i8, i8* %"args", i64 0
  %".35" = bitcast i8* %".34" to i64*
  %"a.data" = load i64, i64* %".35"
  %".36" = inttoptr i64 %"a.data" to float*
  %".37" = getelementptr i8, i8* %"args", i64 16
  %".38" = bitcast i8* %".37" to i64*
  %"a.shape0" = load i64, i64* %".38"
  %"i.addr" = alloca i64
  %"rng_counter" = alloca i64
  store i64 0, i64* %"rng_counter"
  %".7" = getelementptr i8, i8* %"args", i64 40
  %".8" = bitcast i8* %".7" to i64*
  %".9" = load i64, i64* %".8"
  %"b_shape0" = trunc i64 %".9" to i32
  %"begin" = sext i32 0 to i64
  %"end" = sext i32 %"b_shape0" to i64
  %"total" = sub i64 %"end", %"begin"
  %".10" = icmp sle i64 %"total", 0
  br i1 %".10", label %"entry.if", label %"entry.endif"
entry.if:
  ret i64 0
entry.endif:
  %".13" = icmp eq i64 %"chunk", -1
  br i1 %".13", label %"fold", label %"run"
fold:
  ret i64 0
run:
  %"inline" = icmp eq i64 %"nchunks", 0
  %".16" = icmp sgt i64 %"total", 8192
  %".17" = and i1 %"inline", %".16"
  br i1 %".17", label %"run.if", label %"run.endif"
run.if:
  ret i64 %"total"
run.endif:
  %".20" = select  i1 %"inline", i64 1, i64 %"nchunks"
  %".21" = add i64 %"total", %".20"
  %".22" = sub i64 %".21", 1
  %"chunk_size" = sdiv i64 %".22", %".20"
  %".23" = select  i1 %"inline", i64 0, i64 %"chunk"
  %".24" = mul i64 %".23", %"chunk_size"
  %"lo" = add i64 %"begin", %".24"
  %".25" = add i64 %"lo", %"chunk_size"
  %".26" = icmp slt i64 %".25", %"end"
  %"hi" = select  i1 %".26", i64 %".25", i64 %"end"
  store i64 %"lo", i64* %"i.addr"
  br label %"i.cond"
i.cond:
  %".29" = load i64, i64* %"i.addr"
  %".30" = icmp slt i64 %".29", %"hi"
  br i1 %".30", label %"i.body", label %"i.done"
i.step:
  %".74" = load i64, i64* %"i.addr"
  %".75" = add i64 %".74", 1
  store i64 %".75", i64* %"i.addr"
  br label %"i.cond"
i.body:
  %"i" = trunc i64 %".29" to i32
  store i64 0, i64* %"rng_counter"
  %".33" = sub i32 %"i", 1
  %".39" = sext i32 %".33" to i64
  %".40" = sub i64 %"a.shape0", 1
  %".41" = icmp sgt i64 %".39", %".40"
  %".42" = select  i1 %".41", i64 %".40", i64 %".39"
  %".43" = icmp slt i64 %".42", 0
  %".44" = select  i1 %".43", i64 0, i64 %".42"
  %".45" = getelementptr float, float* %".36", i64 %".44"
  %".46" = load float, float* %".45"
  %".47" = sub i64 %"a.shape0", 1
  %".48" = icmp sgt i64 %".29", %".47"
  %".49" = select  i1 %".48", i64 %".47", i64 %".29"
  %".50" = icmp slt i64 %".49", 0
  %".51" = select  i1 %".50", i64 0, i64 %".49"
  %".52" = getelementptr float, float* %".36", i64 %".51"
  %".53" = load float, float* %".52"
  %".54" = fadd float %".46", %".53"
  %".55" = add i32 %"i", 1
  %".56" = sext i32 %".55" to i64
  %".57" = sub i64 %"a.shape0", 1
  %".58" = icmp sgt i64 %".56", %".57"
  %".59" = select  i1 %".58", i64 %".57", i64 %".56"
  %".60" = icmp slt i64 %".59", 0
  %".61" = select  i1 %".60", i64 0, i64 %".59"
  %".62" = getelementptr float, float* %".36", i64 %".61"
  %".63" = load float, float* %".62"
  %".64" = fadd float %".54", %".63"
  %".65" = fdiv float %".64", 0x4008000000000000
  %".71" = getelementptr float, float* %".68", i64 %".29"
  store float %".65", float* %".71"
  br label %"i.step"
i.done:
  ret i64 0
}
