#!/usr/bin/env python3
"""Drops each part of each cache key once, runs the test that guards it, and
restores the file: every test must go red (docs/TESTING.md, "Cache keys").

    scripts/plant-key-drops.py [NAME-FILTER ...]

It edits the checkout in place (each file is restored, even on failure);
run it on a clean tree. Exits 1 when a drop stays green or does not build.
"""
import os
import subprocess
import sys

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
R='xr-build/src/recipe.rs'; N='xr-build/src/noop.rs'; S='backends/xr-spirv/src/stage_cache.rs'
P='xr-plugin-kit/src/program_cache.rs'; C='backends/xr-compiler-vk-spirv/src/pipeline_cache.rs'
B='backends/xr-compiler-vk-spirv/src/shader_binaries.rs'; E='xr-remote-exec/src/execute.rs'; F='xr-build/src/bindgen/reflection.rs'
rt=('xr-build','recipe::tests'); nt=('xr-build','noop::tests'); st=('xr-spirv','stage_cache::tests::each_part')
pt=('xr-plugin-kit','program_cache::tests'); ct=('xr-compiler-vk-spirv','pipeline_cache::tests::the_key_names')
bt=('xr-compiler-vk-spirv','shader_binaries::tests::each_part'); et=('xr-remote-exec','execute::tests::each_part')
ft=('xr-build','bindgen::reflection::tests::a_reflection_is_cached')
G='backends/xr-compiler-glsl/src/runtime.rs'
W='backends/xr-rhi-wgpu/src/pipeline_cache.rs'; wt=('xr-rhi-wgpu','pipeline_cache::tests::each_part')
plants=[
 ('recipe: compiler name',R,'vec![FORMAT.into(), name.into(), identity.into(),','vec![FORMAT.into(), identity.into(),',rt),
 ('recipe: compiler identity',R,'name.into(), identity.into(), target.into()','name.into(), target.into()',rt),
 ('recipe: target',R,'identity.into(), target.into(), program.name','identity.into(), program.name',rt),
 ('recipe: program name',R,'target.into(), program.name.clone().into()]','target.into()]',rt),
 ('recipe: stage kind',R,'parts.push(stage.stage.name().into());','',rt),
 ('recipe: stage file',R,'parts.push(path_text(&stage.file).into());','',rt),
 ('recipe: entry point',R,'parts.push(stage.entry.clone().into());','',rt),
 ('recipe: language',R,'parts.push(planned.language.into());','',rt),
 ('recipe: hit group',R,'parts.push(format!("hit_group:{group}").into());','let _ = group;',rt),
 ('recipe: include dirs',R,'parts.push(path_text(dir).into());','let _ = dir;',rt),
 ('recipe: defines',R,'parts.push(format!("{}={}", define.name, define.value).into());','let _ = define;',rt),
 ('recipe: options',R,'parts.push(format!("option:{name}={value}").into());','let _ = (name, value);',rt),
 ('noop: manifest place',N,'parts.push(crate::paths::absolute(&query.manifest.path).to_string_lossy().as_bytes().to_vec());','',nt),
 ('noop: manifest bytes',N,'parts.push(std::fs::read(&query.manifest.path).ok()?);','std::fs::read(&query.manifest.path).ok()?;',nt),
 ('noop: store',N,'parts.push(crate::paths::absolute(&query.manifest.store).to_string_lossy().as_bytes().to_vec());','',nt),
 ('noop: targets',N,'request.targets, request.programs, request.shard','Vec::<String>::new(), request.programs, request.shard',nt),
 ('noop: programs',N,'request.targets, request.programs, request.shard','request.targets, Vec::<String>::new(), request.shard',nt),
 ('noop: shard',N,'request.targets, request.programs, request.shard','request.targets, request.programs, None::<u8>',nt),
 ('noop: used',N,'parts.push(request.used.as_ref().map(|u| u.key_text()).unwrap_or_default().into());','',nt),
 ('noop: program used',N,'parts.push(format!("{} used {:?}", program.name, used.variants).into());','let _ = used;',nt),
 ('noop: plugin dirs',N,'parts.push(dir.to_string_lossy().as_bytes().to_vec());','',nt),
 ('noop: environment (the stamp\'s variables)',N,'StampLine::Variable(name, value) => variable(&name) == value,','StampLine::Variable(..) => true,',('xr-tests --test build','xr_build::a_variable_the_last_build_read')),
 ('noop: plugin files',N,'parts.push(stamp_text(&file)?.into());','let _ = file;',nt),
 ('stage: language',S,'        desc.language.as_bytes(),\n','',st),
 ('stage: target',S,'"{:?} {spirv:?} {:?}", options.target, options.optimization','"{spirv:?} {:?}", options.optimization',st),
 ('stage: spirv version',S,'"{:?} {spirv:?} {:?}", options.target, options.optimization','"{:?} {:?}", options.target, options.optimization',st),
 ('stage: optimisation',S,'"{:?} {spirv:?} {:?}", options.target, options.optimization','"{:?} {spirv:?}", options.target',st),
 ('stage: stage',S,'        desc.stage.name().as_bytes(),\n','',st),
 ('stage: entry',S,'        desc.entry_point.as_bytes(),\n','',st),
 ('stage: file name',S,'        desc.file_name.as_bytes(),\n','',st),
 ('stage: text',S,'        desc.source.as_bytes(),\n','',st),
 ('stage: source root',S,'        desc.source_root.as_bytes(),\n','',st),
 ('stage: include dirs',S,'parts.push(dir.as_bytes());','let _ = dir;',st),
 ('stage: virtual file names',S,'parts.extend([file.name.as_bytes(), file.contents.as_bytes()]);','parts.extend([file.contents.as_bytes()]);',st),
 ('stage: virtual file texts',S,'parts.extend([file.name.as_bytes(), file.contents.as_bytes()]);','parts.extend([file.name.as_bytes()]);',st),
 ('program binary: content key',P,'            content_key,\n','',pt),
 ('program binary: vendor',P,'            self.identity.vendor.as_bytes(),\n','',pt),
 ('program binary: renderer',P,'            self.identity.renderer.as_bytes(),\n','',pt),
 ('program binary: version',P,'            self.identity.version.as_bytes(),\n','',pt),
 ('program binary: formats',P,'            &formats,\n        ])','        ])',pt),
 ('pipeline cache: uuid',C,'        &capabilities.pipeline_cache_uuid,\n','',ct),
 ('pipeline cache: vendor',C,'        &capabilities.vendor_id.to_le_bytes(),\n','',ct),
 ('pipeline cache: device',C,'        &capabilities.device_id.to_le_bytes(),\n','',ct),
 ('pipeline cache: driver version',C,'        &capabilities.driver_version_code.to_le_bytes(),\n','',ct),
 ('shader binary: target',B,'            request.target.as_bytes(),\n','',bt),
 ('shader binary: object',B,'            &request.artifact,\n','',bt),
 ('shader binary: overrides',B,'            &overrides,\n','',bt),
 ('shader binary: uuid',B,'            &self.binary.uuid,\n','',bt),
 ('shader binary: version',B,'            &self.binary.version.to_le_bytes(),\n','',bt),
 ('action: arguments',E,'        arguments: action.arguments.clone(),\n','',et),
 ('action: environment',E,'        environment_variables: environment,\n','',et),
 ('action: inputs',E,'        input_root_digest: Some(root.root.clone()),\n','',et),
 ('action: outputs',E,'        output_files: outputs.clone(),\n        output_paths: outputs,\n','',et),
 ('action: platform',E,'    let platform = Some(proto::Platform { properties });','    let _ = properties;\n    let platform = Some(proto::Platform { properties: Vec::new() });',et),
 ('action: time limit',E,'        timeout: action.timeout.map(','        timeout: action.timeout.filter(|_| false).map(',et),
 ('wgpu pipeline cache: adapter (vendor, device)',W,'        adapter.as_bytes(),\n','',wt),
 ('wgpu pipeline cache: driver',W,'        info.driver.as_bytes(),\n','',wt),
 ('wgpu pipeline cache: driver info',W,'        info.driver_info.as_bytes(),\n','',wt),
 ('reflection: compiler',F,'    let reflector = blake3::hash(reflector.as_bytes()).to_hex();','    let reflector = blake3::hash(b"").to_hex();',ft),
 ('glsl content key: stage',G,'            part(stage.stage.name().as_bytes());\n','',('xr-tests --test render','program_binaries::the_key_follows')),
 ('glsl content key: text',G,'            part(flat.text.as_bytes());\n','',('xr-tests --test render','program_binaries::the_key_follows')),
 ('glsl content key: separable',G,'        part(&[u8::from(options.separable)]);\n','',('xr-tests --test render','program_binaries::the_key_follows')),
 ('noop through two checkouts: manifest place',N,'parts.push(crate::paths::absolute(&query.manifest.path).to_string_lossy().as_bytes().to_vec());','',('xr-tests --test build','hermetic::two_checkouts')),
 ('shader binary through the library: overrides',B,'            &overrides,\n','',('xr-tests --test render','cache_keys::shader_binaries')),
 ('program binary through the library: content key',P,'            content_key,\n','',('xr-tests --test render','cache_keys::program_binaries')),
]
only=sys.argv[1:]
failed=0
for name,path,old,new,(crate,test) in plants:
    if only and not any(o in name for o in only): continue
    text=open(path).read()
    if text.count(old)!=1:
        print(f'{name}: PLANT NOT FOUND ({text.count(old)})',flush=True); failed+=1; continue
    open(path,'w').write(text.replace(old,new))
    try:
        args=['cargo','test','-q','-p']+crate.split()+(['--lib'] if ' ' not in crate else [])+[test]
        r=subprocess.run(args,capture_output=True,text=True)
        out=r.stdout+r.stderr
        if 'error[' in out or 'error:' in out and 'test failed' not in out:
            verdict='DID NOT COMPILE: '+[l for l in out.splitlines() if 'error' in l][0]
        elif r.returncode!=0:
            msg=[l for l in out.splitlines() if 'gives' in l or 'assertion' in l]
            verdict='red: '+(msg[0] if msg else 'the test failed')[:160]
        else:
            verdict='GREEN (not caught)'
    finally:
        open(path,'w').write(text)
    if not verdict.startswith('red'):
        failed+=1
    print(f'{name}: {verdict}',flush=True)
sys.exit(1 if failed else 0)
